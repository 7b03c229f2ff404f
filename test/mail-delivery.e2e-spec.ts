import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import mailparser from 'mailparser';
import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from './utils/create-test-app.js';
import { mailingServerEnvironment, postJson, registerOn } from './utils/mailing-server.js';
import { EMAIL_VERIFY } from './utils/routes.js';
import { startSmtpSink, tokenOf, type SmtpSink } from './utils/smtp-sink.js';
import { startServer, stopAllServers, type ServerProcess } from './utils/spawn-server.js';
import { createTestDatabase, type TestDatabase } from './utils/test-database.js';

// The sender as a real process: killed with SIGKILL in the middle of a delivery, and two of them
// on one database. Claims last two attempt deadlines (Mail__SendTimeoutSeconds=1: 2 s), so a
// restarted process takes a dead one's mail over within seconds.

const PASSWORD = 'S3cure!pass';

function register(server: ServerProcess, email: string): Promise<void> {
  return registerOn(server, { username: 'mail', email, password: PASSWORD });
}

/**
 * Kills `server` with SIGKILL once the next message has arrived whole, before the sink answers.
 * `keep`: the server keeps the message (it had accepted it; the sender never learns);
 * `discard`: it does not (the client died before the server answered).
 */
function killWhenMessageArrives(
  sink: SmtpSink,
  server: ServerProcess,
  message: 'keep' | 'discard',
): Promise<void> {
  return new Promise((resolve) => {
    sink.beforeAnswer = async () => {
      sink.beforeAnswer = null;
      await server.stop('SIGKILL');
      resolve();
      return message === 'keep' ? 'accept' : 'defer';
    };
  });
}

interface OutboxRow {
  readonly state: string;
  readonly attempts: number;
  readonly recipient: string;
}

function outbox(database: TestDatabase): Promise<OutboxRow[]> {
  return database.query<OutboxRow>(
    'SELECT "state", "attempts", "recipient" FROM mail_outbox ORDER BY "recipient"',
  );
}

describe('mail delivery by real processes', () => {
  let sink: SmtpSink;
  let database: TestDatabase;
  let cwd: string;

  beforeEach(async () => {
    sink = await startSmtpSink();
    database = await createTestDatabase();
    cwd = mkdtempSync(join(tmpdir(), 'keygate-mail-'));
  });

  afterEach(async () => {
    await stopAllServers();
    await sink.close();
    await database.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  const start = (): Promise<ServerProcess> =>
    startServer({ env: mailingServerEnvironment(database, sink), cwd });

  it('should deliver once, after a restart, a mail whose sender was killed before the server accepted it', async () => {
    const first = await start();
    const killed = killWhenMessageArrives(sink, first, 'discard');
    await register(first, 'killed-early@example.com');
    await killed;
    expect(sink.mails).toEqual([]);

    const second = await start();
    const [mail] = await sink.waitFor('killed-early@example.com');
    // Another claim period and poll: nothing else arrives.
    await delay(3_000);

    expect(sink.to('killed-early@example.com')).toHaveLength(1);
    expect(await outbox(database)).toEqual([
      { state: 'sent', attempts: 2, recipient: 'killed-early@example.com' },
    ]);
    const verified = await postJson(second, EMAIL_VERIFY, { token: tokenOf(mail.link) });
    expect(verified.status).toBe(200);
  });

  it('should send the same message again, Message-ID included, when the sender died after the server accepted it', async () => {
    const first = await start();
    const killed = killWhenMessageArrives(sink, first, 'keep');
    await register(first, 'killed-late@example.com');
    await killed;
    await sink.waitFor('killed-late@example.com');

    const second = await start();
    const [original, again] = await sink.waitFor('killed-late@example.com', 2);
    await delay(3_000);

    expect(sink.to('killed-late@example.com')).toHaveLength(2);
    expect(again.messageId).toBe(original.messageId);
    expect([again.subject, again.text, again.html, again.link]).toEqual([
      original.subject,
      original.text,
      original.html,
      original.link,
    ]);
    expect(await outbox(database)).toEqual([
      { state: 'sent', attempts: 2, recipient: 'killed-late@example.com' },
    ]);
    // The two copies carry one single-use token.
    expect((await postJson(second, EMAIL_VERIFY, { token: tokenOf(again.link) })).status).toBe(200);
    expect((await postJson(second, EMAIL_VERIFY, { token: tokenOf(original.link) })).status).toBe(
      400,
    );
  });

  it('should have two instances on one database deliver each mail once', async () => {
    // One after the other: the first migrates the new database. SQLite serves one instance per
    // file (docs/deployment.md) and has no migration lock, so two started together on an empty
    // file could both try to create the tables; the claims on mails are what is tested here.
    const first = await start();
    const servers = [first, await start()];
    // A slow server, so that mails wait while both instances look for work.
    sink.beforeAnswer = () => delay(20);
    const addresses = Array.from({ length: 20 }, (_, i) => `pair-${i}@example.com`);

    await Promise.all(addresses.map((email, i) => register(servers[i % 2], email)));
    for (const email of addresses) {
      await sink.waitFor(email, 1, 20_000);
    }
    await delay(3_000);

    expect(addresses.map((email) => sink.to(email).length)).toEqual(addresses.map(() => 1));
    expect(new Set(sink.mails.map((mail) => mail.messageId)).size).toBe(addresses.length);
    expect((await outbox(database)).map(({ state, attempts }) => `${state} ${attempts}`)).toEqual(
      addresses.map(() => 'sent 1'),
    );
  });
});

describe('mail in development without SMTP', () => {
  let cwd: string;
  let database: TestDatabase;

  beforeEach(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'keygate-eml-'));
    database = await createTestDatabase();
  });

  afterEach(async () => {
    await stopAllServers();
    await database.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('should write each mail as an .eml file under data/mail/ and log where, never the link', async () => {
    const server = await startServer({
      env: {
        NODE_ENV: 'development',
        Jwt__SecretKey: TEST_SECRET_KEY,
        PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
        ConnectionStrings__DefaultConnection: database.connectionString,
      },
      cwd,
    });

    await register(server, 'dev@example.com');
    const directory = join(cwd, 'data', 'mail');
    let files: string[] = [];
    for (let waited = 0; files.length === 0 && waited < 10_000; waited += 50) {
      await delay(50);
      files = existsSync(directory)
        ? readdirSync(directory).filter((name) => name.endsWith('.eml'))
        : [];
    }

    expect(files).toHaveLength(1);
    const mail = await mailparser.simpleParser(readFileSync(join(directory, files[0])));
    expect(mail.subject).toBe('Verifica tu email');
    const link = /http:\/\/localhost:3000\/verify-email\?token=[\w-]{43}/.exec(mail.text ?? '');
    expect(link).not.toBeNull();
    const verified = await postJson(server, EMAIL_VERIFY, { token: tokenOf(link?.[0] ?? null) });
    expect(verified.status).toBe(200);
    const output = server.stdout() + server.stderr();
    expect(output).toContain(`written to data/mail/${files[0]}`);
    expect(output).not.toContain(tokenOf(link?.[0] ?? null));
  });
});
