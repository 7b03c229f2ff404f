import type { Tokens } from 'marked';
import { AdminApiMessages } from '../../src/admin/admin-api.messages.js';
import { AdminRouteMessages } from '../../src/common/admin-route/admin-route.messages.js';
import { AccountMessages } from '../../src/account/account.messages.js';
import { AccountTokensMessages } from '../../src/account-tokens/account-tokens.messages.js';
import { PasswordsMessages } from '../../src/passwords/passwords.messages.js';
import {
  BODY_NOT_AN_OBJECT_MESSAGE,
  INTERNAL_ERROR_MESSAGE,
  UNAUTHORIZED_MESSAGE,
  VALIDATION_PROBLEM_TITLE,
} from '../../src/common/errors/error-bodies.js';
import { DATABASE_UNREACHABLE } from '../../src/health/database.health.js';
import { EmailCodesMessages } from '../../src/email-codes/email-codes.messages.js';
import { BodyMessages } from '../../src/http/body-problems.js';
import { MIGRATIONS_UNREADABLE } from '../../src/health/migrations.health.js';
import { MailMessages } from '../../src/mail/mail.messages.js';
import { MfaMessages } from '../../src/two-factor/mfa.messages.js';
import { PasskeysMessages } from '../../src/passkeys/passkeys.messages.js';
import { FederationMessages } from '../../src/federation/federation.messages.js';
import { SessionsMessages } from '../../src/sessions/sessions.messages.js';
import { TokensMessages } from '../../src/tokens/tokens.messages.js';
import { UsersMessages } from '../../src/users/users.messages.js';
import { KeysMessages } from '../../src/keys/keys.messages.js';
import { WebhooksMessages } from '../../src/webhooks/webhooks.messages.js';
import { OAuthServerMessages } from '../../src/oauth-server/oauth-server.messages.js';
import { allTokens, readRepositoryFile, tableRowsUnder, tokensOf } from './markdown.js';

// docs/api.md quotes the API's texts; they are the code's, character for character. Its
// "Message texts" table names, for every text of the code, the constant that holds it; and any
// text quoted on the pages that describe the API is one of them.

type Text = string | ((minutes: number) => string);

/** Every text the API answers with or stores, by the name the table gives it. */
const CODE_TEXTS: ReadonlyMap<string, Text> = new Map<string, Text>([
  ...prefixed('PasswordsMessages', PasswordsMessages),
  ...prefixed('AccountMessages', AccountMessages),
  ...prefixed('AccountTokensMessages', AccountTokensMessages),
  ...prefixed('UsersMessages', UsersMessages),
  ...prefixed('TokensMessages', TokensMessages),
  ...prefixed('SessionsMessages', SessionsMessages),
  ...prefixed('MailMessages', MailMessages),
  ...prefixed('MfaMessages', MfaMessages),
  ['INTERNAL_ERROR_MESSAGE', INTERNAL_ERROR_MESSAGE],
  ['UNAUTHORIZED_MESSAGE', UNAUTHORIZED_MESSAGE],
  ['VALIDATION_PROBLEM_TITLE', VALIDATION_PROBLEM_TITLE],
  ['BODY_NOT_AN_OBJECT_MESSAGE', BODY_NOT_AN_OBJECT_MESSAGE],
  ...prefixed('BodyMessages', BodyMessages),
  ...prefixed('KeysMessages', KeysMessages),
  ...prefixed('EmailCodesMessages', EmailCodesMessages),
  ...prefixed('PasskeysMessages', PasskeysMessages),
  ...prefixed('FederationMessages', FederationMessages),
  ...prefixed('AdminApiMessages', AdminApiMessages),
  ...prefixed('AdminRouteMessages', AdminRouteMessages),
  ...prefixed('WebhooksMessages', WebhooksMessages),
  ...prefixed('OAuthServerMessages', OAuthServerMessages),
]);

/** Texts of other answers that the pages may quote: the readiness probe's. */
const OTHER_TEXTS = [DATABASE_UNREACHABLE, MIGRATIONS_UNREADABLE];

/** The pages that describe the API and quote its texts. */
const PAGES = [
  'README.md',
  'docs/api.md',
  'docs/behaviour.md',
  'docs/security.md',
  'docs/deployment.md',
  'docs/front-end-flows.md',
  'docs/two-factor.md',
  'docs/passkeys.md',
];

/** The placeholder docs/api.md writes for the minutes of the lockout message. */
const MINUTES = '{remaining}';

function prefixed(module: string, texts: Readonly<Record<string, Text>>): [string, Text][] {
  return Object.entries(texts).map(([key, text]) => [`${module}.${key}`, text]);
}

/** A sentence quoted as a message: a capital, at least two words, a final full stop. */
function isSentence(quoted: string): boolean {
  return /^\p{Lu}\S*\s.*\.$/u.test(quoted);
}

/** The text matches a code text, a number standing for the minutes of a parameterised one. */
function isCodeText(quoted: string): boolean {
  return [...CODE_TEXTS.values(), ...OTHER_TEXTS].some((text) =>
    typeof text === 'string'
      ? text === quoted
      : new RegExp(`^${escape(text(0)).replace('0', `(\\d+|${escape(MINUTES)})`)}$`).test(quoted),
  );
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Code spans, and the `"message"` values of JSON in code spans and code blocks. */
function quotedTexts(path: string): string[] {
  const tokens = allTokens(tokensOf(path));
  const spans = tokens
    .filter((token): token is Tokens.Codespan => token.type === 'codespan')
    .map((span) => span.text);
  const code = tokens
    .filter((token): token is Tokens.Code | Tokens.Codespan =>
      ['code', 'codespan'].includes(token.type),
    )
    .map((token) => token.text);
  const messages = code.flatMap((text) =>
    [...text.matchAll(/"message"\s*:\s*"((?:[^"\\]|\\.)*)"/g)].map(
      (match) => JSON.parse(`"${match[1] ?? ''}"`) as string,
    ),
  );
  return [...spans.filter(isSentence), ...messages];
}

const TABLE = tableRowsUnder(tokensOf('docs/api.md'), 'Message texts').map((row) => ({
  name: row[0] ?? '',
  text: row[row.length - 1] ?? '',
}));

describe('message texts in the documentation', () => {
  it.each(TABLE)('should quote $name as the code has it', ({ name, text }) => {
    const code = CODE_TEXTS.get(name);

    expect(code).toBeDefined();
    expect(typeof code === 'function' ? code(7) : code).toBe(text.replace(MINUTES, '7'));
  });

  it('should list every text of the code in the table of docs/api.md', () => {
    const listed = new Set(TABLE.map((row) => row.name));

    expect([...CODE_TEXTS.keys()].filter((name) => !listed.has(name))).toEqual([]);
  });

  it.each(PAGES)('should quote only texts of the code in %s', (path) => {
    expect(readRepositoryFile(path).length).toBeGreaterThan(0);
    expect(quotedTexts(path).filter((quoted) => !isCodeText(quoted))).toEqual([]);
  });

  it.each([
    ['a changed accent', 'Credenciales invalidas.', false],
    ['a missing full stop in a JSON message', 'Cuenta desactivada', false],
    [
      'the lockout text with its minutes',
      'Cuenta bloqueada temporalmente. Intenta en 15 minuto(s).',
      true,
    ],
    [
      'the lockout text with its placeholder',
      PasswordsMessages.lockedOut(0).replace('0', MINUTES),
      true,
    ],
  ])('should judge %s', (_case, quoted, expected) => {
    expect(isCodeText(quoted)).toBe(expected);
  });
});
