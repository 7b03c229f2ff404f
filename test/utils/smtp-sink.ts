import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import mailparser, { type AddressObject } from 'mailparser';
import smtp from 'smtp-server';

/** A mail the sink accepted, as a person's mail program would read it. */
export interface ReceivedMail {
  readonly to: string;
  readonly from: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  readonly messageId: string;
  /** The first link of the text part. */
  readonly link: string | null;
  /** The raw message, as the server received it. */
  readonly raw: string;
}

/**
 * What the sink answers to a message once it has its whole text: accept it (250), refuse it for
 * now (451) or for good (550), or call `hook` first (a test that kills the sender right there).
 */
export type Verdict = 'accept' | 'defer' | 'reject';

export interface SmtpSink {
  readonly port: number;
  /** `smtp://127.0.0.1:<port>`, for Smtp__Url. */
  readonly url: string;
  readonly mails: ReceivedMail[];
  /** How the next messages are answered; `accept` unless a test says otherwise. */
  verdict: Verdict;
  /**
   * Runs when a message has arrived whole, before the sink answers. A verdict it returns decides
   * for this message; otherwise `verdict` does. Only accepted messages are kept in `mails`.
   */
  beforeAnswer: (() => Promise<Verdict | void> | Verdict | void) | null;
  /** Resolves with the mails to `to` once there are at least `count`; rejects after `timeoutMs`. */
  waitFor(to: string, count?: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  to(address: string): ReceivedMail[];
  close(): Promise<void>;
}

const LINK = /https?:\/\/\S+/;

/** A real SMTP server (smtp-server) on a free loopback port that keeps what it accepts. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const sink = createSmtpSink();
  await sink.listen();
  return sink;
}

/**
 * A sink for the tests of the enclosing describe: it listens from their beforeAll on (register
 * it before an app whose environment names it) and closes after them.
 */
export function useSmtpSink(): SmtpSink {
  const sink = createSmtpSink();
  beforeAll(() => sink.listen());
  afterAll(() => sink.close());
  return sink;
}

/** The sink, listening once `listen()` has resolved; `port` and `url` are set then. */
function createSmtpSink(): SmtpSink & { listen(): Promise<void> } {
  const mails: ReceivedMail[] = [];
  const sink: SmtpSink & { listen(): Promise<void> } = {
    port: 0,
    url: '',
    mails,
    verdict: 'accept',
    beforeAnswer: null,
    waitFor: async (to, count = 1, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (sink.to(to).length < count) {
        if (Date.now() > deadline) {
          throw new Error(`expected ${count} mail(s) to ${to}, got ${sink.to(to).length}`);
        }
        await delay(20);
      }
      return sink.to(to);
    },
    to: (address) => mails.filter((mail) => mail.to === address),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    listen: async () => {
      server.listen(0, '127.0.0.1');
      await once(server.server, 'listening');
      const { port } = server.server.address() as AddressInfo;
      Object.assign(sink, { port, url: `smtp://127.0.0.1:${port}` });
    },
  };
  const server = new smtp.SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        void (async () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const verdict = (await sink.beforeAnswer?.()) ?? sink.verdict;
          if (verdict === 'defer') {
            callback(Object.assign(new Error('Try again later'), { responseCode: 451 }));
            return;
          }
          if (verdict === 'reject') {
            callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
            return;
          }
          mails.push(await parse(raw));
          callback();
        })();
      });
    },
  });
  return sink;
}

async function parse(raw: string): Promise<ReceivedMail> {
  const parsed = await mailparser.simpleParser(raw);
  const text = parsed.text ?? '';
  return {
    to: addressOf(parsed.to),
    from: addressOf(parsed.from),
    subject: parsed.subject ?? '',
    text,
    html: typeof parsed.html === 'string' ? parsed.html : '',
    messageId: parsed.messageId ?? '',
    link: LINK.exec(text)?.[0] ?? null,
    raw,
  };
}

function addressOf(field: AddressObject | AddressObject[] | undefined): string {
  const first = Array.isArray(field) ? field[0] : field;
  return first?.value[0]?.address ?? '';
}

/** The token in a link made from a `…?token={token}` template. */
export function tokenOf(link: string | null): string {
  const token = link === null ? null : new URL(link).searchParams.get('token');
  if (token === null) {
    throw new Error(`no token in link ${String(link)}`);
  }
  return token;
}
