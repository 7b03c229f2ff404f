import { CLI_COMMANDS, CLI_USAGE, parseCliArguments, UsageError } from './cli-arguments.js';

function usageErrorOf(argv: string[]): string {
  try {
    parseCliArguments(argv);
  } catch (error: unknown) {
    if (error instanceof UsageError) {
      return error.message;
    }
    throw error;
  }
  throw new Error('expected a UsageError');
}

describe(parseCliArguments.name, () => {
  const sut = parseCliArguments;

  it.each([
    [
      ['users:deactivate', 'a@example.com'],
      { command: 'users:deactivate', email: 'a@example.com' },
    ],
    [['users:activate', ' A@Example.com '], { command: 'users:activate', email: 'A@Example.com' }],
    [['users:unlock', 'a@example.com'], { command: 'users:unlock', email: 'a@example.com' }],
    [
      ['sessions:revoke-all', 'a@example.com'],
      { command: 'sessions:revoke-all', email: 'a@example.com' },
    ],
    [['tokens:purge'], { command: 'tokens:purge' }],
    [['audit:purge'], { command: 'audit:purge' }],
    [
      ['audit:export', '--before', '2025-01-01'],
      { command: 'audit:export', before: new Date('2025-01-01T00:00:00.000Z'), output: null },
    ],
    [
      ['audit:export', '--before=2025-01-01T12:30:00.5+02:00', '--output', 'trail.jsonl'],
      {
        command: 'audit:export',
        before: new Date('2025-01-01T10:30:00.500Z'),
        output: 'trail.jsonl',
      },
    ],
    [
      ['audit:export', '--output=a.jsonl', '--before', '2024-02-29T23:59Z'],
      { command: 'audit:export', before: new Date('2024-02-29T23:59:00.000Z'), output: 'a.jsonl' },
    ],
    [['audit', 'a@example.com'], { command: 'audit', email: 'a@example.com', limit: 50 }],
    [
      ['audit', 'a@example.com', '--limit', '7'],
      { command: 'audit', email: 'a@example.com', limit: 7 },
    ],
    [
      ['audit', '--limit=1000', 'a@example.com'],
      { command: 'audit', email: 'a@example.com', limit: 1000 },
    ],
    [
      ['users:identities', 'a@example.com'],
      { command: 'users:identities', email: 'a@example.com' },
    ],
    [
      ['users:unlink-identity', ' a@example.com ', ' 3f2504e0-4f89-41d3-9a0c-0305e82c3301 '],
      {
        command: 'users:unlink-identity',
        email: 'a@example.com',
        identityId: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      },
    ],
  ])('should read %j', (argv, expected) => {
    expect(sut(argv)).toEqual({ kind: 'run', ...expected });
  });

  // A kid is base64url: one in 64 begins with '-'. So may an e-mail's local part.
  const DASHED_KID = '-FzCEoa-JV5kcIrBYs82d99f1B9fFohnsJZ4T18yd3k';
  it.each([
    [['keys:retire', DASHED_KID], { command: 'keys:retire', kid: DASHED_KID }],
    [['keys:retire', '--', DASHED_KID], { command: 'keys:retire', kid: DASHED_KID }],
    [['users:unlock', '-a@example.com'], { command: 'users:unlock', email: '-a@example.com' }],
    [
      ['audit', '--limit', '3', '-a@example.com'],
      { command: 'audit', email: '-a@example.com', limit: 3 },
    ],
    [
      ['audit', '-b@example.com', '--limit=4'],
      { command: 'audit', email: '-b@example.com', limit: 4 },
    ],
    [['keys:import', '-key.pem'], { command: 'keys:import', file: '-key.pem' }],
  ])('should read a value that begins with a dash: %j', (argv, expected) => {
    expect(sut(argv)).toEqual({ kind: 'run', ...expected });
  });

  it.each([
    [['keys:retire', DASHED_KID, '-x'], "Unknown option '-x'."],
    [['keys:retire', DASHED_KID, 'other'], 'keys:retire has too many arguments: keys:retire <kid>'],
    [['keys:retire', DASHED_KID, '--force'], "Unknown option '--force'."],
    [
      ['audit', '-a@example.com', '--limit', '0'],
      '--limit must be a whole number from 1 to 1000, got "0".',
    ],
    [['-Fz', 'keys:list'], 'Unknown command "-Fz".'],
  ])('should still refuse %j around a value that begins with a dash', (argv, message) => {
    expect(usageErrorOf(argv)).toBe(message);
  });

  it.each([['--help'], ['-h'], ['audit', '--help'], ['nonsense', '-h']])(
    'should ask for help with %j',
    (...argv) => {
      expect(sut(argv)).toEqual({ kind: 'help' });
    },
  );

  it.each([
    [[], 'No command given.'],
    [['users:erase', 'a@example.com'], 'Unknown command "users:erase".'],
    [['users:deactivate'], 'users:deactivate is missing an argument: users:deactivate <email>'],
    [
      ['users:unlock', 'a@example.com', 'b@example.com'],
      'users:unlock has too many arguments: users:unlock <email>',
    ],
    [['tokens:purge', 'now'], 'tokens:purge has too many arguments: tokens:purge'],
    [
      ['users:unlink-identity', 'a@example.com'],
      'users:unlink-identity is missing an argument: users:unlink-identity <email> <identityId>',
    ],
    [
      ['users:unlink-identity', 'not-an-email', 'x'],
      'users:unlink-identity expects an e-mail address, got "not-an-email".',
    ],
    [['audit:purge', '30'], 'audit:purge has too many arguments: audit:purge'],
    [
      ['audit:purge', '--before', '2025-01-01'],
      '--before applies only to audit:export, not to audit:purge.',
    ],
    [
      ['audit', 'a@example.com', '--output', 'x'],
      '--output applies only to audit:export, not to audit.',
    ],
    [['audit:export', '--limit', '5'], '--limit applies only to audit, not to audit:export.'],
    [
      ['audit:export'],
      'audit:export needs --before: audit:export --before <date> [--output <file>]',
    ],
    [
      ['audit:export', '2025-01-01'],
      'audit:export has too many arguments: audit:export --before <date> [--output <file>]',
    ],
    [['audit:export', '--before', '2025-01-01', '--output', ''], '--output needs a file name.'],
    ...[
      'yesterday',
      '2025-02-30',
      '2025-13-01',
      '2025-01-01T12:00:00',
      '2025-01-01 12:00Z',
      '2025-01-01T25:00Z',
      '1735689600',
    ].map((value): [string[], string] => [
      ['audit:export', '--before', value],
      `--before must be a date such as 2025-01-01 or an instant such as 2025-01-01T12:00:00Z, got "${value}".`,
    ]),
    [['users:activate', 'alice'], 'users:activate expects an e-mail address, got "alice".'],
    [
      ['users:activate', 'a@example.com', '--limit', '5'],
      '--limit applies only to audit, not to users:activate.',
    ],
    [
      ['audit', 'a@example.com', '--limit', '0'],
      '--limit must be a whole number from 1 to 1000, got "0".',
    ],
    [
      ['audit', 'a@example.com', '--limit', '1001'],
      '--limit must be a whole number from 1 to 1000, got "1001".',
    ],
    [
      ['audit', 'a@example.com', '--limit', '2.5'],
      '--limit must be a whole number from 1 to 1000, got "2.5".',
    ],
    [
      ['audit', 'a@example.com', '--limit', 'ten'],
      '--limit must be a whole number from 1 to 1000, got "ten".',
    ],
    [['audit', 'a@example.com', '--limit'], "Option '--limit <value>' argument missing."],
    [['audit', 'a@example.com', '--force'], "Unknown option '--force'."],
  ])('should refuse %j', (argv, message) => {
    expect(usageErrorOf(argv)).toBe(message);
  });

  it('should list every command and the exit codes in the usage text', () => {
    for (const { usage } of Object.values(CLI_COMMANDS)) {
      expect(CLI_USAGE).toContain(usage);
    }
    // A usage longer than the column still keeps its summary apart.
    expect(CLI_USAGE).toContain(
      '  audit:export --before <date> [--output <file>]  Write every audit event older',
    );
    expect(CLI_USAGE).toContain('--before <date>');
    expect(CLI_USAGE).toContain('--output <file>');
    expect(CLI_USAGE).toContain('--limit N');
    expect(CLI_USAGE).toMatch(/Exit codes: 0 .*1 .*\n.*2 usage error/);
  });
});

describe(`${parseCliArguments.name}: admin keys`, () => {
  it.each([
    [
      ['admin-keys:create', '--name', 'support-tool', '--scopes', 'users:read,sessions:write'],
      {
        command: 'admin-keys:create',
        name: 'support-tool',
        scopes: ['users:read', 'sessions:write'],
      },
    ],
    [['admin-keys:list'], { command: 'admin-keys:list' }],
    [['admin-keys:revoke', 'support-tool'], { command: 'admin-keys:revoke', name: 'support-tool' }],
  ])('should read %j', (argv, expected) => {
    expect(parseCliArguments(argv)).toEqual({ kind: 'run', ...expected });
  });

  it.each<[string[], string]>([
    [
      ['admin-keys:create', '--name', 'x'],
      'admin-keys:create needs --name and --scopes: admin-keys:create --name <name> --scopes <a,b>',
    ],
    [
      ['admin-keys:create', '--scopes', 'users:read'],
      'admin-keys:create needs --name and --scopes: admin-keys:create --name <name> --scopes <a,b>',
    ],
    [['admin-keys:revoke'], 'admin-keys:revoke is missing an argument: admin-keys:revoke <name>'],
    [['admin-keys:list', 'x'], 'admin-keys:list has too many arguments: admin-keys:list'],
    [
      ['audit:purge', '--name', 'x'],
      '--name applies only to admin-keys:create and oauth-clients:add, not to audit:purge.',
    ],
  ])('should refuse %j', (argv, message) => {
    expect(usageErrorOf(argv)).toBe(message);
  });

  it('should name the scopes in the usage text', () => {
    expect(CLI_USAGE).toContain(
      'users:read, users:write, sessions:write, audit:read, keys:read, keys:write, webhooks:read, webhooks:write',
    );
  });
});

describe(`${parseCliArguments.name}: OAuth clients`, () => {
  it.each([
    [
      [
        'oauth-clients:add',
        '--name',
        'Grafana <b>',
        '--redirect-uri',
        'https://g.example.com/cb',
        '--redirect-uri',
        'https://g.example.com/cb2',
        '--post-logout-redirect-uri',
        'https://g.example.com/',
        '--scopes',
        'openid,email',
      ],
      {
        command: 'oauth-clients:add',
        name: 'Grafana <b>',
        redirectUris: ['https://g.example.com/cb', 'https://g.example.com/cb2'],
        postLogoutRedirectUris: ['https://g.example.com/'],
        isPublic: false,
        scopes: ['openid', 'email'],
        grantTypes: null,
      },
    ],
    [
      ['oauth-clients:add', '--public', '--name', 'CLI', '--redirect-uri', 'http://127.0.0.1/cb'],
      {
        command: 'oauth-clients:add',
        name: 'CLI',
        redirectUris: ['http://127.0.0.1/cb'],
        postLogoutRedirectUris: [],
        isPublic: true,
        scopes: null,
        grantTypes: null,
      },
    ],
    [
      [
        'oauth-clients:add',
        '--name',
        'Job',
        '--grant',
        'client_credentials',
        '--grant',
        'device_code',
      ],
      {
        command: 'oauth-clients:add',
        name: 'Job',
        redirectUris: [],
        postLogoutRedirectUris: [],
        isPublic: false,
        scopes: null,
        grantTypes: ['client_credentials', 'device_code'],
      },
    ],
    [['oauth-clients:list'], { command: 'oauth-clients:list' }],
    [['oauth-clients:remove', 'abc'], { command: 'oauth-clients:remove', id: 'abc' }],
    [['oauth-clients:rotate-secret', 'abc'], { command: 'oauth-clients:rotate-secret', id: 'abc' }],
  ])('should read %j', (argv, expected) => {
    expect(parseCliArguments(argv)).toEqual({ kind: 'run', ...expected });
  });

  it.each<[string[], string]>([
    [
      ['oauth-clients:add', '--name', 'x'],
      'oauth-clients:add needs --name and --redirect-uri: oauth-clients:add --name <n> --redirect-uri <uri> [--redirect-uri …] [--post-logout-redirect-uri <uri> …] [--public] [--scopes <a,b>] [--grant <type> …]',
    ],
    [
      ['oauth-clients:add', '--name', 'x', '--grant', 'authorization_code'],
      'oauth-clients:add needs --name and --redirect-uri: oauth-clients:add --name <n> --redirect-uri <uri> [--redirect-uri …] [--post-logout-redirect-uri <uri> …] [--public] [--scopes <a,b>] [--grant <type> …]',
    ],
    [
      ['oauth-clients:remove'],
      'oauth-clients:remove is missing an argument: oauth-clients:remove <id>',
    ],
    [
      ['audit:purge', '--public'],
      '--public applies only to oauth-clients:add, not to audit:purge.',
    ],
  ])('should refuse %j', (argv, message) => {
    expect(usageErrorOf(argv)).toBe(message);
  });
});
