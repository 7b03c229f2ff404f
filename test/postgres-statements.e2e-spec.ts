import { NamedStatement } from '../src/database/postgres-statements.js';
import { postgresPoolOf } from '../src/database/driver-handle.js';
import { useSharedTestApp } from './utils/create-test-app.js';
import { describeOnPostgres } from './utils/test-database.js';

// NamedStatement describes its rows once and then reads every later run without a Describe
// (decision 0053): each run must give exactly the rows pg's own query gives, on every pooled
// connection, and a failed run must leave the pool and the statement usable.

/** Every column type the repositories read, nulls included, over several rows. */
const TYPED = `SELECT n AS "count", n::text || $1::text AS "label", (n % 2 = 0) AS "isEven",
  CASE WHEN n = 2 THEN NULL ELSE timestamp '2026-11-27 10:42:00.123' + n * interval '1 day' END AS "at",
  CASE WHEN n = 3 THEN NULL ELSE timestamptz '2026-11-27 10:42:00.5+00' END AS "atZone",
  decode('00ff' || lpad(to_hex(n), 2, '0'), 'hex') AS "bytes", n::bigint * 10000000000 AS "big",
  $2::timestamp AS "parameter"
  FROM generate_series(1, $3::int) AS n ORDER BY n`;

describeOnPostgres('named statements on PostgreSQL', () => {
  const t = useSharedTestApp();

  async function ownQuery(text: string, values: unknown[]): Promise<unknown[]> {
    const result = await postgresPoolOf(t.dataSource).query<Record<string, unknown>>({
      text,
      values,
    });
    return result.rows;
  }

  it('should give the rows pg gives, on the first run and on every later one, on every connection', async () => {
    const statement = new NamedStatement(t.dataSource, 'test_typed_rows', TYPED);
    const parameter = new Date('2026-11-27T08:00:00.250Z');
    for (const count of [4, 0, 1, 4]) {
      const values = ['é', parameter, count];
      const expected = await ownQuery(TYPED, values);

      expect(await statement.rows(values)).toEqual(expected);
    }
    // Concurrent runs spread over the pool's connections, each parsing the statement once.
    const runs = await Promise.all(
      Array.from({ length: 24 }, (_, i) => statement.rows(['x', parameter, (i % 3) + 1])),
    );
    for (const [i, rows] of runs.entries()) {
      expect(rows).toEqual(await ownQuery(TYPED, ['x', parameter, (i % 3) + 1]));
    }
    expect(await statement.first(['y', parameter, 2])).toEqual(
      (await ownQuery(TYPED, ['y', parameter, 2]))[0],
    );
  });

  it("should reject a failed run with PostgreSQL's error and go on working afterwards", async () => {
    const statement = new NamedStatement(
      t.dataSource,
      'test_division',
      'SELECT 10 / $1::int AS "quotient"',
    );
    expect(await statement.rows([5])).toEqual([{ quotient: 2 }]);

    for (let i = 0; i < 12; i += 1) {
      await expect(statement.rows([0])).rejects.toMatchObject({
        code: '22012',
        message: 'division by zero',
      });
      expect(await statement.rows([2])).toEqual([{ quotient: 5 }]);
    }
    // A parameter the server cannot read fails at Bind, after the statement was parsed.
    await expect(statement.rows(['not a number'])).rejects.toMatchObject({ code: '22P02' });
    expect(await statement.first([1])).toEqual({ quotient: 10 });
  });
});
