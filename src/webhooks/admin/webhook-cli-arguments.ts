import { UsageError } from '../../common/errors/usage-error.js';

/** The webhook commands (docs/operations/webhooks.md), in the order --help lists them. */
export const WEBHOOK_CLI_COMMANDS = {
  'webhooks:add': {
    usage: 'webhooks:add --url <url> --events <all|a,b>',
    summary:
      'Subscribe a URL to every event type (all) or to those listed; prints its id and its whsec_ secret, once.',
  },
  'webhooks:list': {
    usage: 'webhooks:list',
    summary: 'List the webhook subscriptions (never their secrets).',
  },
  'webhooks:remove': {
    usage: 'webhooks:remove <id>',
    summary: 'Remove a subscription and every delivery to it not yet made.',
  },
  'webhooks:dead': {
    usage: 'webhooks:dead',
    summary: 'List the dead webhook deliveries (out of attempts), oldest event first.',
  },
  'webhooks:replay': {
    usage: 'webhooks:replay <id|all>',
    summary: 'Deliver a dead webhook delivery again (or all of them), with the same webhook-id.',
  },
} as const;

export type WebhookCliCommand = keyof typeof WEBHOOK_CLI_COMMANDS;

export function isWebhookCommand(name: string): name is WebhookCliCommand {
  return Object.hasOwn(WEBHOOK_CLI_COMMANDS, name);
}

/** The lines of the --help options section for the webhook commands. */
export const WEBHOOK_CLI_OPTIONS = [
  `${'--url <url>'.padEnd(30)}webhooks:add only: the receiver's http(s) endpoint.`,
  `${'--events <all|a,b>'.padEnd(30)}webhooks:add only: "all", or event types, comma-separated.`,
];

export type WebhookCliInvocation =
  | {
      readonly kind: 'run';
      readonly command: 'webhooks:add';
      readonly url: string;
      readonly events: string;
    }
  | { readonly kind: 'run'; readonly command: 'webhooks:list' | 'webhooks:dead' }
  | {
      readonly kind: 'run';
      readonly command: 'webhooks:remove' | 'webhooks:replay';
      /** A subscription's id (remove), a delivery's id or `all` (replay). */
      readonly id: string;
    };

/** The webhook commands' arguments; throws UsageError when they are wrong. */
export function parseWebhookArguments(
  command: WebhookCliCommand,
  rest: readonly string[],
  values: { readonly url?: string; readonly events?: string },
): WebhookCliInvocation {
  switch (command) {
    case 'webhooks:add':
      expectArguments(command, rest, 0);
      if (values.url === undefined || values.url === '') {
        throw new UsageError(`webhooks:add needs --url: ${WEBHOOK_CLI_COMMANDS[command].usage}`);
      }
      if (values.events === undefined || values.events === '') {
        throw new UsageError(`webhooks:add needs --events: ${WEBHOOK_CLI_COMMANDS[command].usage}`);
      }
      return { kind: 'run', command, url: values.url, events: values.events };
    case 'webhooks:list':
    case 'webhooks:dead':
      expectArguments(command, rest, 0);
      return { kind: 'run', command };
    case 'webhooks:remove':
    case 'webhooks:replay':
      expectArguments(command, rest, 1);
      return { kind: 'run', command, id: rest[0].trim() };
  }
}

function expectArguments(command: WebhookCliCommand, rest: readonly string[], count: number): void {
  if (rest.length !== count) {
    const problem = rest.length < count ? 'is missing an argument' : 'has too many arguments';
    throw new UsageError(`${command} ${problem}: ${WEBHOOK_CLI_COMMANDS[command].usage}`);
  }
}
