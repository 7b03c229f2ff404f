import { UsageError } from '../../common/errors/usage-error.js';
import {
  INITIAL_ACCESS_TOKEN_DEFAULT_SECONDS,
  INITIAL_ACCESS_TOKEN_MAX_SECONDS,
} from '../registration/initial-access-tokens.service.js';

/** The client commands (docs/operations/oauth-server.md), in the order --help lists them. */
export const OAUTH_CLIENT_CLI_COMMANDS = {
  'oauth-clients:add': {
    usage:
      'oauth-clients:add --name <n> --redirect-uri <uri> [--redirect-uri …] [--post-logout-redirect-uri <uri> …] [--public] [--scopes <a,b>] [--grant <type> …]',
    summary:
      "Register an application with the OpenID provider; prints its client id, and a confidential one's secret, once.",
  },
  'oauth-clients:list': {
    usage: 'oauth-clients:list',
    summary: 'List the registered applications (never their secrets).',
  },
  'oauth-clients:remove': {
    usage: 'oauth-clients:remove <id>',
    summary: 'Remove an application: it can start no sign-in any more.',
  },
  'oauth-clients:rotate-secret': {
    usage: 'oauth-clients:rotate-secret <id>',
    summary:
      'Give a confidential application a new secret, printed once; the old one stops working.',
  },
  'oauth-clients:initial-access-token': {
    usage: 'oauth-clients:initial-access-token [--expires-in <d>]',
    summary:
      'Make a token that lets applications register themselves (OAuthServer__DynamicRegistration=initial-access-token); printed once.',
  },
} as const;

export type OAuthClientCliCommand = keyof typeof OAUTH_CLIENT_CLI_COMMANDS;

export function isOAuthClientCommand(name: string): name is OAuthClientCliCommand {
  return Object.hasOwn(OAUTH_CLIENT_CLI_COMMANDS, name);
}

/** The lines of the --help options section for the client commands. */
export const OAUTH_CLIENT_CLI_OPTIONS = [
  `${'--redirect-uri <uri>'.padEnd(30)}oauth-clients:add only: an exact redirect URI; repeat for more.`,
  `${'--post-logout-redirect-uri <uri>'.padEnd(30)}oauth-clients:add only: where logout may return; repeatable.`,
  `${'--public'.padEnd(30)}oauth-clients:add only: a native or browser app, no secret, PKCE.`,
  `${'--expires-in <d>'.padEnd(30)}oauth-clients:initial-access-token only: 30m, 12h or 7d (default 7d, at most 365d).`,
  `${'--grant <type>'.padEnd(30)}oauth-clients:add only: authorization_code (default), device_code, client_credentials; repeatable.`,
];

export type OAuthClientCliInvocation =
  | {
      readonly kind: 'run';
      readonly command: 'oauth-clients:add';
      readonly name: string;
      readonly redirectUris: readonly string[];
      readonly postLogoutRedirectUris: readonly string[];
      readonly isPublic: boolean;
      /** Null: every scope. */
      readonly scopes: readonly string[] | null;
      /** Null: the authorization code grant only. */
      readonly grantTypes: readonly string[] | null;
    }
  | { readonly kind: 'run'; readonly command: 'oauth-clients:list' }
  | {
      readonly kind: 'run';
      readonly command: 'oauth-clients:remove' | 'oauth-clients:rotate-secret';
      readonly id: string;
    }
  | {
      readonly kind: 'run';
      readonly command: 'oauth-clients:initial-access-token';
      readonly expiresInSeconds: number;
    };

/** The client commands' arguments; throws UsageError when they are wrong. */
export function parseOAuthClientArguments(
  command: OAuthClientCliCommand,
  rest: readonly string[],
  values: {
    readonly name?: string;
    readonly scopes?: string;
    readonly 'redirect-uri'?: readonly string[];
    readonly 'post-logout-redirect-uri'?: readonly string[];
    readonly public?: boolean;
    readonly 'expires-in'?: string;
    readonly grant?: readonly string[];
  },
): OAuthClientCliInvocation {
  switch (command) {
    case 'oauth-clients:add': {
      expectArguments(command, rest, 0);
      const redirectUris = values['redirect-uri'] ?? [];
      const grantTypes = values.grant ?? null;
      // A device or service client (no authorization_code) has no redirect URI to give.
      const needsRedirect = grantTypes === null || grantTypes.includes('authorization_code');
      if (
        values.name === undefined ||
        values.name === '' ||
        (needsRedirect && redirectUris.length === 0)
      ) {
        throw new UsageError(
          `oauth-clients:add needs --name and --redirect-uri: ${OAUTH_CLIENT_CLI_COMMANDS[command].usage}`,
        );
      }
      return {
        kind: 'run',
        command,
        name: values.name,
        redirectUris,
        postLogoutRedirectUris: values['post-logout-redirect-uri'] ?? [],
        isPublic: values.public === true,
        scopes: values.scopes === undefined ? null : values.scopes.split(/[,\s]+/),
        grantTypes,
      };
    }
    case 'oauth-clients:list':
      expectArguments(command, rest, 0);
      return { kind: 'run', command };
    case 'oauth-clients:remove':
    case 'oauth-clients:rotate-secret':
      expectArguments(command, rest, 1);
      return { kind: 'run', command, id: rest[0].trim() };
    case 'oauth-clients:initial-access-token':
      expectArguments(command, rest, 0);
      return {
        kind: 'run',
        command,
        expiresInSeconds:
          values['expires-in'] === undefined
            ? INITIAL_ACCESS_TOKEN_DEFAULT_SECONDS
            : parseDuration(values['expires-in']),
      };
  }
}

const DURATION_UNITS: Readonly<Record<string, number>> = { m: 60, h: 60 * 60, d: 24 * 60 * 60 };

/** `30m`, `12h`, `7d`: a positive whole number of minutes, hours or days, up to 365 days. */
function parseDuration(value: string): number {
  const match = /^(\d{1,6})([mhd])$/.exec(value.trim());
  const seconds = match === null ? 0 : Number(match[1]) * DURATION_UNITS[match[2]];
  if (seconds <= 0 || seconds > INITIAL_ACCESS_TOKEN_MAX_SECONDS) {
    throw new UsageError(
      `--expires-in must be minutes, hours or days such as 30m, 12h or 7d (at most 365d), got "${value}".`,
    );
  }
  return seconds;
}

function expectArguments(
  command: OAuthClientCliCommand,
  rest: readonly string[],
  count: number,
): void {
  if (rest.length !== count) {
    const problem = rest.length < count ? 'is missing an argument' : 'has too many arguments';
    throw new UsageError(`${command} ${problem}: ${OAUTH_CLIENT_CLI_COMMANDS[command].usage}`);
  }
}
