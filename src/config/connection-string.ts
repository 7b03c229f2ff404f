import { isAbsolute, resolve } from 'node:path';

export type DatabaseTarget =
  | { readonly type: 'sqlite'; readonly path: string }
  | { readonly type: 'postgres'; readonly url: string };

const DATA_SOURCE_PREFIX = /^\s*data\s+source\s*=\s*/i;

/**
 * The one place that reads `ConnectionStrings:DefaultConnection`. Accepts a bare SQLite path,
 * `Data Source=<path>` and `:memory:`; a `postgres://` URL is reserved for PostgreSQL.
 */
export function parseConnectionString(value: string): DatabaseTarget {
  const trimmed = value.trim();
  if (/^postgres(ql)?:\/\//i.test(trimmed)) {
    throw new Error(
      'ConnectionStrings__DefaultConnection: PostgreSQL URLs are not supported yet; use a SQLite file path',
    );
  }
  const path = trimmed.replace(DATA_SOURCE_PREFIX, '').replace(/;\s*$/, '').trim();
  if (path.length === 0) {
    throw new Error('ConnectionStrings__DefaultConnection: the SQLite path is empty');
  }
  if (path.includes(';')) {
    throw new Error(
      'ConnectionStrings__DefaultConnection: only "Data Source=<path>" is understood for SQLite',
    );
  }
  return { type: 'sqlite', path: path === ':memory:' || isAbsolute(path) ? path : resolve(path) };
}
