import { CLI_USAGE, parseCliArguments, UsageError } from '../../admin/cli/cli-arguments.js';

function usageErrorOf(argv: readonly string[]): string {
  try {
    parseCliArguments(argv);
  } catch (error: unknown) {
    if (error instanceof UsageError) {
      return error.message;
    }
    throw error;
  }
  throw new Error('no usage error');
}

describe('the webhook commands of the admin CLI', () => {
  it.each([
    [
      ['webhooks:add', '--url', 'https://h.example.com/x', '--events', 'all'],
      { command: 'webhooks:add', url: 'https://h.example.com/x', events: 'all' },
    ],
    [
      ['webhooks:add', '--events=registered,account_deleted', '--url=https://h.example.com/x'],
      {
        command: 'webhooks:add',
        url: 'https://h.example.com/x',
        events: 'registered,account_deleted',
      },
    ],
    [['webhooks:list'], { command: 'webhooks:list' }],
    [['webhooks:dead'], { command: 'webhooks:dead' }],
    [['webhooks:remove', ' 0c1d '], { command: 'webhooks:remove', id: '0c1d' }],
    [['webhooks:replay', 'all'], { command: 'webhooks:replay', id: 'all' }],
    [['webhooks:replay', 'msg_1_2'], { command: 'webhooks:replay', id: 'msg_1_2' }],
  ])('should read %j', (argv, expected) => {
    expect(parseCliArguments(argv)).toEqual({ kind: 'run', ...expected });
  });

  it.each([
    [
      ['webhooks:add', '--events', 'all'],
      'webhooks:add needs --url: webhooks:add --url <url> --events <all|a,b>',
    ],
    [
      ['webhooks:add', '--url', 'https://h.example.com/'],
      'webhooks:add needs --events: webhooks:add --url <url> --events <all|a,b>',
    ],
    [
      ['webhooks:add', 'x', '--url', 'u', '--events', 'all'],
      'webhooks:add has too many arguments: webhooks:add --url <url> --events <all|a,b>',
    ],
    [['webhooks:remove'], 'webhooks:remove is missing an argument: webhooks:remove <id>'],
    [
      ['webhooks:replay', 'a', 'b'],
      'webhooks:replay has too many arguments: webhooks:replay <id|all>',
    ],
    [['webhooks:list', 'x'], 'webhooks:list has too many arguments: webhooks:list'],
    [['webhooks:dead', '--url', 'u'], '--url applies only to webhooks:add, not to webhooks:dead.'],
    [
      ['audit:purge', '--events', 'all'],
      '--events applies only to webhooks:add, not to audit:purge.',
    ],
  ])('should refuse %j', (argv, message) => {
    expect(usageErrorOf(argv)).toBe(message);
  });

  it('should list the commands and their options in the usage text', () => {
    for (const usage of [
      'webhooks:add --url <url> --events <all|a,b>',
      'webhooks:list',
      'webhooks:remove <id>',
      'webhooks:dead',
      'webhooks:replay <id|all>',
      '--url <url>',
      '--events <all|a,b>',
    ]) {
      expect(CLI_USAGE).toContain(usage);
    }
  });
});
