import { DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import { useTestApp } from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';
import { REFRESH, REGISTER } from './utils/routes.js';
import { onPostgres, type TestDatabase } from './utils/test-database.js';

/** Makes the database refuse to insert an account with this address; returns the undo. */
async function refuseAccount(database: TestDatabase, email: string): Promise<() => Promise<void>> {
  if (onPostgres) {
    await database.query(
      `CREATE FUNCTION refuse_account() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
        `IF NEW.email = '${email}' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$`,
    );
    await database.query(
      'CREATE TRIGGER refuse_account BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION refuse_account()',
    );
    return async () => {
      await database.query('DROP TRIGGER refuse_account ON users');
      await database.query('DROP FUNCTION refuse_account()');
    };
  }
  await database.query(
    `CREATE TRIGGER refuse_account BEFORE INSERT ON users WHEN NEW.email = '${email}' ` +
      `BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
  );
  return async () => {
    await database.query('DROP TRIGGER refuse_account');
  };
}

describe('writes that arrive together (group commit on SQLite)', () => {
  const t = useTestApp();

  it('should commit every concurrent registration and refresh but the one that failed, which answers 500 alone', async () => {
    const sessions = await Promise.all([0, 1, 2].map(() => registerUser(t)));
    const restore = await refuseAccount(t.database, 'boom@example.com');

    const registrations = [0, 1, 2, 3, 4, 5].map((n) => ({
      username: `together${n}`,
      email: `together${n}@example.com`,
      password: DEFAULT_PASSWORD,
    }));
    const answers = await Promise.all([
      ...registrations.slice(0, 3).map((body) => t.post(REGISTER, body)),
      t.post(REGISTER, { username: 'boom', email: 'boom@example.com', password: DEFAULT_PASSWORD }),
      ...sessions.map((session) => t.post(REFRESH, { refreshToken: session.refreshToken })),
      ...registrations.slice(3).map((body) => t.post(REGISTER, body)),
    ]);
    await restore();

    expect(answers.map((answer) => answer.status)).toEqual([
      201, 201, 201, 500, 200, 200, 200, 201, 201, 201,
    ]);
    expect(answers[3].json()).toEqual(errorBody(500, 'Ocurrió un error interno.'));
    const emails = (
      await t.database.query<{ email: string }>('SELECT email FROM users ORDER BY email')
    ).map((row) => row.email);
    expect(emails).toEqual(expect.arrayContaining(registrations.map((body) => body.email)));
    expect(emails).not.toContain('boom@example.com');
    const trail = await auditRows(t.database);
    expect(trail.filter((row) => row.type === 'registered')).toHaveLength(3 + 6);
    expect(trail.filter((row) => row.type === 'token_refreshed').map((row) => row.userId)).toEqual(
      expect.arrayContaining(sessions.map((session) => session.id)),
    );
    // Every refreshed token answered 200 was rotated, and the rotation committed.
    for (const [n, session] of sessions.entries()) {
      const { refreshToken } = answers[4 + n].json<{ refreshToken: string }>();
      expect((await t.post(REFRESH, { refreshToken })).status).toBe(200);
      expect((await t.post(REFRESH, { refreshToken: session.refreshToken })).status).toBe(401);
    }
  });
});
