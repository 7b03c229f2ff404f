import { parseArgs } from 'node:util';
import type { KeysInvocation } from '../../keys/admin/keys-commands.js';
import { ADMIN_SCOPES } from '../../common/admin-route/admin-scopes.js';
import { DEFAULT_AUDIT_LIMIT, MAX_AUDIT_LIMIT } from '../admin.service.js';
import { UsageError } from '../../common/errors/usage-error.js';
import {
  isWebhookCommand,
  parseWebhookArguments,
  WEBHOOK_CLI_COMMANDS,
  WEBHOOK_CLI_OPTIONS,
  type WebhookCliCommand,
  type WebhookCliInvocation,
} from '../../webhooks/admin/webhook-cli-arguments.js';
import {
  isOAuthClientCommand,
  OAUTH_CLIENT_CLI_COMMANDS,
  OAUTH_CLIENT_CLI_OPTIONS,
  parseOAuthClientArguments,
  type OAuthClientCliCommand,
  type OAuthClientCliInvocation,
} from '../../oauth-server/admin/oauth-client-cli-arguments.js';

/** The commands, in the order --help lists them. */
export const CLI_COMMANDS = {
  'users:deactivate': {
    usage: 'users:deactivate <email>',
    summary: 'Deactivate an account and revoke every active refresh token of it.',
  },
  'users:activate': { usage: 'users:activate <email>', summary: 'Activate an account again.' },
  'users:unlock': {
    usage: 'users:unlock <email>',
    summary: 'Clear the failed-login counter and any lockout of an account.',
  },
  'users:delete': {
    usage: 'users:delete <email>',
    summary:
      'Delete an account, its tokens and its unsent mail (its audit rows stay, without the e-mail).',
  },
  'users:mfa-reset': {
    usage: 'users:mfa-reset <email>',
    summary: 'Remove the TOTP second factor and recovery codes of an account (a lost device).',
  },
  'sessions:revoke-all': {
    usage: 'sessions:revoke-all <email>',
    summary: 'Revoke every active refresh token of an account (log it out everywhere).',
  },
  'users:email-collisions': {
    usage: 'users:email-collisions',
    summary:
      'List accounts whose e-mails are one address in canonical form (runs before migrations).',
  },
  'tokens:purge': {
    usage: 'tokens:purge',
    summary: 'Run the expired-token cleanup once (TokenCleanup__RetentionDays applies).',
  },
  audit: {
    usage: `audit <email> [--limit N]`,
    summary: `Show the newest audit events of an account, newest first (default ${DEFAULT_AUDIT_LIMIT}, at most ${MAX_AUDIT_LIMIT}).`,
  },
  'audit:export': {
    usage: 'audit:export --before <date> [--output <file>]',
    summary:
      'Write every audit event older than the date as JSON Lines, oldest first, to a new file or standard output.',
  },
  'audit:purge': {
    usage: 'audit:purge',
    summary: 'Delete the audit events older than Audit__RetentionDays, once.',
  },
  'keys:list': {
    usage: 'keys:list',
    summary: 'List the signing keys and HS256 secrets by kid, with their states (no key material).',
  },
  'keys:rotate': {
    usage: 'keys:rotate',
    summary: 'Make a key of Jwt__SigningAlgorithm and publish it as next; it signs after the lead.',
  },
  'keys:retire': {
    usage: 'keys:retire <kid>',
    summary: 'Retire a key or an HS256 secret at once: the tokens it signed stop working.',
  },
  'keys:import': {
    usage: 'keys:import <pem-file>',
    summary:
      'Import a PEM private key (P-256, Ed25519, RSA) as the next key, as keys:rotate would.',
  },
  ...WEBHOOK_CLI_COMMANDS,
  ...OAUTH_CLIENT_CLI_COMMANDS,
  'users:passkeys-remove': {
    usage: 'users:passkeys-remove <email>',
    summary: 'Remove every passkey of an account (lost or stolen devices); sessions stay.',
  },
  'users:identities': {
    usage: 'users:identities <email>',
    summary:
      'List the identities at other providers linked to an account (only with Federation__Providers).',
  },
  'users:unlink-identity': {
    usage: 'users:unlink-identity <email> <identityId>',
    summary:
      'Unlink one identity of an account, even its last way to sign in (only with Federation__Providers).',
  },
  'admin-keys:create': {
    usage: 'admin-keys:create --name <name> --scopes <a,b>',
    summary: 'Create an admin API key with these scopes; prints its secret, once.',
  },
  'admin-keys:list': {
    usage: 'admin-keys:list',
    summary: 'List the admin API keys: name, scopes, created, revoked (never a secret).',
  },
  'admin-keys:revoke': {
    usage: 'admin-keys:revoke <name>',
    summary: 'Revoke an admin API key: it opens nothing from the next request on.',
  },
} as const;

export type CliCommand = keyof typeof CLI_COMMANDS;

type CommandWithoutArguments =
  'tokens:purge' | 'users:email-collisions' | 'audit:purge' | 'admin-keys:list';

type AdminKeyCommand = 'admin-keys:create' | 'admin-keys:revoke';

/** Commands that take no e-mail: their own parser's (the webhooks', the OAuth clients'). */
type CommandOfItsOwn = WebhookCliCommand | OAuthClientCliCommand;

export type CliInvocation =
  | { readonly kind: 'help' }
  | { readonly kind: 'run'; readonly command: CommandWithoutArguments }
  | {
      readonly kind: 'run';
      readonly command: Exclude<
        CliCommand,
        | CommandWithoutArguments
        | KeysInvocation['command']
        | CommandOfItsOwn
        | AdminKeyCommand
        | 'audit'
        | 'audit:export'
        | 'users:unlink-identity'
      >;
      readonly email: string;
    }
  | KeysInvocation
  | {
      readonly kind: 'run';
      readonly command: 'admin-keys:create';
      readonly name: string;
      readonly scopes: readonly string[];
    }
  | { readonly kind: 'run'; readonly command: 'admin-keys:revoke'; readonly name: string }
  | {
      readonly kind: 'run';
      readonly command: 'users:unlink-identity';
      readonly email: string;
      /** An id as `users:identities` lists it. */
      readonly identityId: string;
    }
  | {
      readonly kind: 'run';
      readonly command: 'audit:export';
      /** Events strictly older than this are exported. */
      readonly before: Date;
      /** The file to create; null for standard output. */
      readonly output: string | null;
    }
  | {
      readonly kind: 'run';
      readonly command: 'audit';
      readonly email: string;
      readonly limit: number;
    }
  | WebhookCliInvocation
  | OAuthClientCliInvocation;

export { UsageError } from '../../common/errors/usage-error.js';

export const CLI_USAGE = [
  'Usage: npm run cli -- <command> [arguments]   (or: node dist/cli.js <command> [arguments])',
  '',
  'Commands:',
  ...Object.values(CLI_COMMANDS).map(
    ({ usage, summary }) => `  ${`${usage}  `.padEnd(30)}${summary}`,
  ),
  '',
  'Options:',
  `  ${'--limit N'.padEnd(30)}audit only: how many events to show.`,
  `  ${'--before <date>'.padEnd(30)}audit:export only: a date (2025-01-01, midnight UTC) or an`,
  `  ${''.padEnd(30)}instant with its zone (2025-01-01T12:00:00Z); older events are written.`,
  `  ${'--output <file>'.padEnd(30)}audit:export only: the file to create (never overwritten);`,
  `  ${''.padEnd(30)}without it, the lines go to standard output.`,
  ...WEBHOOK_CLI_OPTIONS.map((line) => `  ${line}`),
  `  ${'--name <name>'.padEnd(30)}admin-keys:create: the key's name (letters, digits, . _ -);`,
  `  ${''.padEnd(30)}oauth-clients:add: the application's name, shown to people.`,
  `  ${'--scopes <a,b>'.padEnd(30)}admin-keys:create: comma-separated scopes, among`,
  `  ${''.padEnd(30)}${ADMIN_SCOPES.join(', ')};`,
  `  ${''.padEnd(30)}oauth-clients:add: among openid, profile, email, offline_access (default all).`,
  ...OAUTH_CLIENT_CLI_OPTIONS.map((line) => `  ${line}`),
  `  ${'-h, --help'.padEnd(30)}Show this help.`,
  '',
  'E-mails are matched as the API matches them: in canonical form (see docs/behaviour.md).',
  'Configuration comes from the environment and .env, exactly as for the service.',
  '',
  'Exit codes: 0 done; 1 failed (unknown account, invalid configuration, database error);',
  '            2 usage error (unknown command, missing or extra argument, bad option).',
  '',
].join('\n');

/** Reads the command line; throws UsageError when it is wrong. Touches nothing. */
export function parseCliArguments(argv: readonly string[]): CliInvocation {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error: unknown) {
    // parseArgs names the bad option well; its advice on positionals starting with '-' is noise.
    // Not `instanceof Error`: under Jest's module sandbox Node's errors come from another realm.
    const message =
      typeof error === 'object' && error !== null && 'message' in error
        ? String(error.message)
        : String(error);
    throw new UsageError(message.split('. ')[0].replace(/\.?$/, '.'));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    return { kind: 'help' };
  }
  const [command, ...rest] = positionals;
  if (command === undefined) {
    throw new UsageError('No command given.');
  }
  if (!isCommand(command)) {
    throw new UsageError(`Unknown command "${command}".`);
  }
  for (const [option, owners] of OPTION_OWNERS) {
    if (values[option] !== undefined && !(owners as readonly string[]).includes(command)) {
      throw new UsageError(
        `--${option} applies only to ${owners.join(' and ')}, not to ${command}.`,
      );
    }
  }
  if (
    command === 'tokens:purge' ||
    command === 'users:email-collisions' ||
    command === 'audit:purge' ||
    command === 'keys:list' ||
    command === 'keys:rotate' ||
    command === 'admin-keys:list'
  ) {
    expectArguments(command, rest, 0);
    return { kind: 'run', command };
  }
  if (command === 'keys:retire') {
    expectArguments(command, rest, 1);
    return { kind: 'run', command, kid: rest[0].trim() };
  }
  if (command === 'keys:import') {
    expectArguments(command, rest, 1);
    return { kind: 'run', command, file: rest[0] };
  }
  if (isWebhookCommand(command)) {
    return parseWebhookArguments(command, rest, values);
  }
  if (isOAuthClientCommand(command)) {
    return parseOAuthClientArguments(command, rest, values);
  }
  if (command === 'audit:export') {
    expectArguments(command, rest, 0);
    if (values.before === undefined) {
      throw new UsageError(`audit:export needs --before: ${CLI_COMMANDS[command].usage}`);
    }
    if (values.output === '') {
      throw new UsageError('--output needs a file name.');
    }
    return {
      kind: 'run',
      command,
      before: parseBefore(values.before),
      output: values.output ?? null,
    };
  }
  if (command === 'admin-keys:create') {
    expectArguments(command, rest, 0);
    if (values.name === undefined || values.scopes === undefined) {
      throw new UsageError(
        `admin-keys:create needs --name and --scopes: ${CLI_COMMANDS[command].usage}`,
      );
    }
    return { kind: 'run', command, name: values.name, scopes: values.scopes.split(',') };
  }
  if (command === 'users:unlink-identity') {
    expectArguments(command, rest, 2);
    return { kind: 'run', command, email: emailOf(command, rest[0]), identityId: rest[1].trim() };
  }
  expectArguments(command, rest, 1);
  if (command === 'admin-keys:revoke') {
    return { kind: 'run', command, name: rest[0] };
  }
  const email = emailOf(command, rest[0]);
  if (command === 'audit') {
    return { kind: 'run', command, email, limit: parseLimit(values.limit) };
  }
  return { kind: 'run', command, email };
}

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  limit: { type: 'string' },
  before: { type: 'string' },
  output: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  name: { type: 'string' },
  scopes: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'post-logout-redirect-uri': { type: 'string', multiple: true },
  public: { type: 'boolean' },
  'expires-in': { type: 'string' },
  grant: { type: 'string', multiple: true },
} as const;

function parse(argv: readonly string[]) {
  return parseArgs({
    args: withDashedValuesAsPositionals(argv),
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
}

/**
 * A kid is base64url, so one in 64 begins with '-', and an e-mail may too; parseArgs would read
 * `-FzCE…` as the short options -F -z …. The CLI has one short option (-h) and no groups of them,
 * so an argument of one dash and two or more characters is a value. When there is one, this moves
 * every positional behind '--', in order, leaving options (and the values they take) in front;
 * otherwise the command line is parsed as given. '--' given by the operator works as always.
 */
function withDashedValuesAsPositionals(argv: readonly string[]): string[] {
  const options: string[] = [];
  const positionals: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (argument === '--') {
      positionals.push(...argv.slice(index + 1));
      break;
    }
    if (!isOption(argument)) {
      positionals.push(argument);
      continue;
    }
    options.push(argument);
    if (takesSeparateValue(argument) && index + 1 < argv.length) {
      index += 1;
      options.push(argv[index]);
    }
  }
  return positionals.some(isDashedValue) ? [...options, '--', ...positionals] : [...argv];
}

function isOption(argument: string): boolean {
  return argument.startsWith('--') || /^-.$/.test(argument);
}

function isDashedValue(argument: string): boolean {
  return /^-[^-]./.test(argument);
}

/** `--limit 5` rather than `--limit=5`: the next argument is the value, whatever it looks like. */
function takesSeparateValue(argument: string): boolean {
  const name = argument.slice(2);
  return (
    argument.startsWith('--') &&
    Object.hasOwn(OPTIONS, name) &&
    OPTIONS[name as keyof typeof OPTIONS].type === 'string'
  );
}

/** Each option and the commands it belongs to. */
const OPTION_OWNERS = [
  ['limit', ['audit']],
  ['before', ['audit:export']],
  ['output', ['audit:export']],
  ['url', ['webhooks:add']],
  ['events', ['webhooks:add']],
  ['name', ['admin-keys:create', 'oauth-clients:add']],
  ['scopes', ['admin-keys:create', 'oauth-clients:add']],
  ['redirect-uri', ['oauth-clients:add']],
  ['post-logout-redirect-uri', ['oauth-clients:add']],
  ['public', ['oauth-clients:add']],
  ['expires-in', ['oauth-clients:initial-access-token']],
  ['grant', ['oauth-clients:add']],
] as const satisfies readonly (readonly [string, readonly CliCommand[]])[];

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A calendar date (midnight UTC) or an instant with its zone. A time without a zone is refused:
 * it would mean the local time of whichever machine runs the CLI. So is a date that does not
 * exist (2025-02-30), which Date would quietly move to March.
 */
function parseBefore(value: string): Date {
  const isDate = DATE_ONLY.test(value);
  const instant = new Date(isDate ? `${value}T00:00:00Z` : value);
  if (
    (isDate || INSTANT_WITH_ZONE.test(value)) &&
    calendarDateExists(value.slice(0, 10)) &&
    !Number.isNaN(instant.getTime())
  ) {
    return instant;
  }
  throw new UsageError(
    `--before must be a date such as 2025-01-01 or an instant such as 2025-01-01T12:00:00Z, got "${value}".`,
  );
}

function calendarDateExists(date: string): boolean {
  const parsed = new Date(`${date}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(date);
}

function isCommand(name: string): name is CliCommand {
  return Object.hasOwn(CLI_COMMANDS, name);
}

function expectArguments(command: CliCommand, rest: readonly string[], count: number): void {
  if (rest.length !== count) {
    const problem = rest.length < count ? 'is missing an argument' : 'has too many arguments';
    throw new UsageError(`${command} ${problem}: ${CLI_COMMANDS[command].usage}`);
  }
}

function emailOf(command: CliCommand, argument: string): string {
  const email = argument.trim();
  if (!email.includes('@')) {
    throw new UsageError(`${command} expects an e-mail address, got "${argument}".`);
  }
  return email;
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) {
    return DEFAULT_AUDIT_LIMIT;
  }
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > MAX_AUDIT_LIMIT) {
    throw new UsageError(
      `--limit must be a whole number from 1 to ${MAX_AUDIT_LIMIT}, got "${value}".`,
    );
  }
  return limit;
}
