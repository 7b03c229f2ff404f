import { isAbsolute, resolve } from 'node:path';
import { parseConnectionString } from './connection-string.js';

describe(parseConnectionString.name, () => {
  const sut = parseConnectionString;

  it.each([
    ['a bare absolute path', '/var/lib/keygate/keygate.db', '/var/lib/keygate/keygate.db'],
    ['Data Source=<path>', 'Data Source=/srv/keygate.db', '/srv/keygate.db'],
    ['lower case with spaces and a trailing semicolon', 'data source = /srv/k.db;', '/srv/k.db'],
    ['surrounding whitespace', '   /srv/k.db  ', '/srv/k.db'],
    ['an upper-case prefix', 'DATA SOURCE=/srv/k.db', '/srv/k.db'],
  ])('should accept %s', (_label, value, path) => {
    expect(sut(value)).toEqual({ type: 'sqlite', path });
  });

  it.each([':memory:', 'Data Source=:memory:', 'data source = :memory: ;'])(
    'should keep %s as the in-memory database',
    (value) => {
      expect(sut(value)).toEqual({ type: 'sqlite', path: ':memory:' });
    },
  );

  it.each([
    ['data/keygate.db', 'data/keygate.db'],
    ['Data Source=data/keygate.db', 'data/keygate.db'],
    ['./k.db', 'k.db'],
  ])('should resolve the relative path in %s against the working directory', (value, relative) => {
    const target = sut(value);

    expect(target.type).toBe('sqlite');
    const path = target.type === 'sqlite' ? target.path : '';
    expect(isAbsolute(path)).toBe(true);
    expect(path).toBe(resolve(process.cwd(), relative));
  });

  it.each(['', '   ', 'Data Source=', 'data source = ;'])(
    'should reject %j because the path is empty',
    (value) => {
      expect(() => sut(value)).toThrow(
        'ConnectionStrings__DefaultConnection: the SQLite path is empty',
      );
    },
  );

  it.each([
    'postgres://user:pw@localhost:5432/keygate',
    'postgresql://localhost/keygate',
    'POSTGRES://localhost/keygate',
    ' postgres://localhost/keygate?sslmode=require ',
  ])('should select PostgreSQL for the URL %s', (value) => {
    expect(sut(value)).toEqual({ type: 'postgres', url: value.trim() });
  });

  it.each(['postgres://', 'postgres://localhost', 'postgres://localhost/', 'postgres://:5432/x'])(
    'should refuse the incomplete PostgreSQL URL %s',
    (value) => {
      expect(() => sut(value)).toThrow(/ConnectionStrings__DefaultConnection/);
    },
  );

  it('should reject other connection-string keys', () => {
    expect(() => sut('Data Source=/srv/k.db;Cache=Shared')).toThrow(
      'ConnectionStrings__DefaultConnection: only "Data Source=<path>" is understood for SQLite',
    );
  });

  it('should not echo a PostgreSQL password in the error message', () => {
    let message = '';
    try {
      sut('postgres://user:s3cret@localhost');
    } catch (error: unknown) {
      message = error instanceof Error ? error.message : String(error);
    }

    expect(message).toContain('ConnectionStrings__DefaultConnection');
    expect(message).not.toContain('s3cret');
  });
});
