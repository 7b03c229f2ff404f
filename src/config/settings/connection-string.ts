import { isAbsolute, resolve } from 'node:path';

export type DatabaseTarget =
  | { readonly type: 'sqlite'; readonly path: string }
  | { readonly type: 'postgres'; readonly url: string };

const DATA_SOURCE_PREFIX = /^\s*data\s+source\s*=\s*/i;
const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/**
 * The one place that reads `ConnectionStrings:DefaultConnection`: a `postgres://` or
 * `postgresql://` URL selects PostgreSQL; a bare path, `Data Source=<path>` or `:memory:` selects
 * SQLite.
 */
export function parseConnectionString(value: string): DatabaseTarget {
  const trimmed = value.trim();
  if (POSTGRES_URL.test(trimmed)) {
    return { type: 'postgres', url: parsePostgresUrl(trimmed) };
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

function parsePostgresUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Never echo the URL: it may carry a password.
    throw new Error('ConnectionStrings__DefaultConnection: not a valid PostgreSQL URL');
  }
  if (url.hostname === '' || url.pathname.length <= 1) {
    throw new Error(
      'ConnectionStrings__DefaultConnection: a PostgreSQL URL needs a host and a database name',
    );
  }
  return value;
}
