import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { errorBody } from './utils/expected-bodies.js';
import { mailingServerEnvironment, postJson, registerOn } from './utils/mailing-server.js';
import { EMAIL_CODE_LOGIN, EMAIL_CODE_SEND } from './utils/routes.js';
import { startSmtpSink, tokenOf, type ReceivedMail, type SmtpSink } from './utils/smtp-sink.js';
import { startServer, stopAllServers, type ServerProcess } from './utils/spawn-server.js';
import { createTestDatabase, type TestDatabase } from './utils/test-database.js';

// Sign-in codes with two instances as real processes on one database (PostgreSQL under
// `npm run test:pg`): each code is mailed once by whichever sender claims it, works on either
// instance, and gets no more wrong tries than EmailCode__MaxAttempts however the tries are spread.

const PASSWORD = 'S3cure!pass';
const INVALID_CODE = 'Código inválido o expirado.';

function environment(database: TestDatabase, sink: SmtpSink): Record<string, string> {
  return {
    ...mailingServerEnvironment(database, sink),
    Management__Enabled: 'false',
    EmailCode__Enabled: 'true',
    EmailCode__LinkUrl: 'https://app.example.com/sign-in/email-code?token={token}',
    EmailCode__MaxAttempts: '3',
  };
}

function register(server: ServerProcess, email: string): Promise<void> {
  return registerOn(server, { username: 'code', email, password: PASSWORD });
}

function codeMails(sink: SmtpSink, email: string): ReceivedMail[] {
  return sink.to(email).filter((mail) => mail.subject === 'Tu código para iniciar sesión');
}

async function codeMail(sink: SmtpSink, email: string): Promise<ReceivedMail> {
  for (let waited = 0; waited < 20_000; waited += 50) {
    const [mail] = codeMails(sink, email);
    if (mail !== undefined) {
      return mail;
    }
    await delay(50);
  }
  throw new Error(`no code mail to ${email}`);
}

function codeOf(mail: ReceivedMail): string {
  return /^(\d{6})$/m.exec(mail.text)?.[1] ?? '';
}

describe('sign-in codes with two instances on one database', () => {
  let sink: SmtpSink;
  let database: TestDatabase;
  let servers: ServerProcess[];
  let cwd: string;

  beforeAll(async () => {
    // A directory of their own: no `.env` of the checkout is read, no default database made.
    cwd = mkdtempSync(join(tmpdir(), 'keygate-email-codes-'));
    sink = await startSmtpSink();
    database = await createTestDatabase();
    // One after the other: the first migrates the new database.
    const first = await startServer({ env: environment(database, sink), cwd });
    servers = [first, await startServer({ env: environment(database, sink), cwd })];
  });

  afterAll(async () => {
    await stopAllServers();
    await sink.close();
    await database.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('should mail each code once, and sign in on the instance that did not take the request', async () => {
    const addresses = Array.from({ length: 10 }, (_, i) => `code-${i}@example.com`);
    await Promise.all(addresses.map((email, i) => register(servers[i % 2], email)));
    // Both instances asked for each address at once: one code, one mail (Mail__MinIntervalSeconds).
    await Promise.all(
      addresses.flatMap((email) =>
        servers.map((server) => postJson(server, EMAIL_CODE_SEND, { email })),
      ),
    );
    const mails = await Promise.all(addresses.map((email) => codeMail(sink, email)));
    await delay(3_000);

    expect(addresses.map((email) => codeMails(sink, email).length)).toEqual(addresses.map(() => 1));
    const answers = await Promise.all(
      addresses.map((email, i) =>
        i % 2 === 0
          ? postJson(servers[1], EMAIL_CODE_LOGIN, { email, code: codeOf(mails[i]) })
          : postJson(servers[0], EMAIL_CODE_LOGIN, { token: tokenOf(mails[i].link) }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(addresses.map(() => 200));
    // Used up everywhere.
    const again = await postJson(servers[0], EMAIL_CODE_LOGIN, {
      email: addresses[0],
      code: codeOf(mails[0]),
    });
    expect(again.json()).toEqual(errorBody(401, INVALID_CODE));
  });

  it('should give a code no more than its three wrong tries, spread over both instances', async () => {
    const email = 'guessed@example.com';
    await register(servers[0], email);
    await postJson(servers[1], EMAIL_CODE_SEND, { email });
    const mail = await codeMail(sink, email);
    const wrong = codeOf(mail) === '000000' ? '000001' : '000000';

    const tries = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        postJson(servers[i % 2], EMAIL_CODE_LOGIN, { email, code: wrong }),
      ),
    );
    const right = await postJson(servers[0], EMAIL_CODE_LOGIN, { email, code: codeOf(mail) });

    expect(tries.map((res) => res.json())).toEqual(tries.map(() => errorBody(401, INVALID_CODE)));
    expect(right.json()).toEqual(errorBody(401, INVALID_CODE));
    const [account] = await database.query<{ failedLoginAttempts: number }>(
      'SELECT "failedLoginAttempts" FROM users WHERE email = $1',
      [email],
    );
    // Three counted: the code ended at its third, and the others found nothing left to guess.
    expect(account?.failedLoginAttempts).toBe(3);
  });
});
