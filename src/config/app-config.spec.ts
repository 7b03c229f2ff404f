import { Test } from '@nestjs/testing';
import { resolve } from 'node:path';
import { AppConfigModule } from './app-config.module.js';
import { availableParallelism } from 'node:os';
import {
  AppConfig,
  ConfigurationError,
  defaultHashingConcurrency,
  loadAppConfig,
} from './app-config.js';
import { SAMPLE_SECRET_KEY } from './environment-variables.js';

const SECRET = 'unit-test-secret-0123456789abcdef-XYZ';

function configurationErrorOf(raw: Record<string, unknown>): ConfigurationError {
  try {
    loadAppConfig(raw);
  } catch (error: unknown) {
    if (error instanceof ConfigurationError) {
      return error;
    }
    throw error;
  }
  throw new Error('expected a ConfigurationError, but the configuration loaded');
}

describe(loadAppConfig.name, () => {
  const sut = loadAppConfig;

  it('should apply every default when only a valid secret is given', () => {
    const config = sut({ Jwt__SecretKey: SECRET });

    expect(config).toBeInstanceOf(AppConfig);
    expect(config).toEqual({
      isDevelopment: false,
      port: 3000,
      host: '0.0.0.0',
      jwt: {
        secret: SECRET,
        previousSecrets: [],
        issuer: 'keygate',
        audience: 'keygate-clients',
        accessTokenExpiryMinutes: 15,
        refreshTokenExpiryDays: 7,
        clockSkewSeconds: 0,
        requireActiveSession: false,
        refreshRetryWindowSeconds: 0,
      },
      database: {
        target: { type: 'sqlite', path: resolve('data/keygate.db') },
        poolSize: 10,
        connectionTimeoutMs: 5_000,
        statementTimeoutMs: 5_000,
        sqliteCacheSizeMb: 16,
        sqliteMmapSizeMb: 256,
        sqliteSynchronous: 'full',
        accountCache: false,
      },
      passwordHashing: {
        iterations: 600_000,
        concurrency: defaultHashingConcurrency(availableParallelism(), undefined),
      },
      tokenCleanup: { enabled: true, intervalSeconds: 3_600, batchSize: 1_000, retentionDays: 7 },
      auditRetention: {
        retentionDays: 365,
        purgeEnabled: false,
        purgeIntervalSeconds: 3_600,
        purgeBatchSize: 250,
        purgePauseMs: 50,
      },
      management: { enabled: true, port: 9464, host: '127.0.0.1' },
      logging: { level: 'info' },
      accountFlows: {
        requireVerifiedEmail: false,
        passwordResetTokenMinutes: 30,
        emailVerificationTokenHours: 48,
      },
      mail: {
        transport: { kind: 'off' },
        from: 'Keygate <no-reply@localhost>',
        links: {
          resetPassword: 'http://localhost:3000/reset-password?token={token}',
          verifyEmail: 'http://localhost:3000/verify-email?token={token}',
          emailCode: 'http://localhost:3000/email-code?token={token}',
        },
        templateDirectory: null,
        minIntervalSeconds: 60,
        maxAttempts: 10,
        sendTimeoutSeconds: 30,
        pollIntervalSeconds: 5,
        retentionDays: 7,
      },
      mfa: { issuer: 'Keygate', keys: [] },
      http: { requestTimeoutMs: 30_000, responseTimeoutMs: 30_000 },
      sessions: { maxActivePerUser: 100 },
      allowedOrigins: { exact: [], anyPortOf: [], any: false },
      hsts: { enabled: false, maxAgeSeconds: 31_536_000, includeSubDomains: false },
      trustedProxies: [],
      warnings: [],
      keys: {
        signingAlgorithm: 'HS256',
        encryptionKeys: [],
        jwksMaxAgeSeconds: 300,
        refreshIntervalSeconds: 30,
        rotationIntervalDays: 0,
      },
      emailCode: { enabled: false, codeLength: 6, lifetimeMinutes: 10, maxAttempts: 5 },
      webhooks: {
        keys: [],
        allowPrivateDestinations: false,
        maxAttempts: 15,
        retryDelayMs: 10_000,
        maxRetryDelayMs: 1_800_000,
        connectTimeoutMs: 5_000,
        timeoutMs: 15_000,
        pollIntervalMs: 5_000,
        retentionDays: 7,
        yieldToRequests: true,
      },
      passkeys: null,
      federation: null,
      adminApi: { listener: 'public' },
      oauthServer: null,
    });
  });

  it('should deliver webhooks at full speed only when Webhooks__YieldToRequests is false, and refuse other words', () => {
    expect(
      sut({ Jwt__SecretKey: SECRET, Webhooks__YieldToRequests: 'false' }).webhooks.yieldToRequests,
    ).toBe(false);
    expect(
      configurationErrorOf({ Jwt__SecretKey: SECRET, Webhooks__YieldToRequests: 'sometimes' })
        .message,
    ).toContain('Webhooks__YieldToRequests');
  });

  it('should treat an exported but empty optional variable as unset', () => {
    const config = sut({
      Jwt__SecretKey: SECRET,
      PORT: '',
      HOST: '',
      Jwt__AccessTokenExpiryMinutes: '',
      ConnectionStrings__DefaultConnection: '',
    });

    expect(config.port).toBe(3000);
    expect(config.host).toBe('0.0.0.0');
    expect(config.jwt.accessTokenExpiryMinutes).toBe(15);
    expect(config.database.target).toEqual({ type: 'sqlite', path: resolve('data/keygate.db') });
  });

  it.each([
    ['PORT', '8080', (c: AppConfig) => c.port, 8080],
    ['HOST', '127.0.0.1', (c: AppConfig) => c.host, '127.0.0.1'],
    [
      'Jwt__Issuer',
      'https://id.example.com',
      (c: AppConfig) => c.jwt.issuer,
      'https://id.example.com',
    ],
    ['Jwt__Audience', 'mobile-app', (c: AppConfig) => c.jwt.audience, 'mobile-app'],
    ['Jwt__AccessTokenExpiryMinutes', '5', (c: AppConfig) => c.jwt.accessTokenExpiryMinutes, 5],
    ['Jwt__RefreshTokenExpiryDays', '30', (c: AppConfig) => c.jwt.refreshTokenExpiryDays, 30],
    ['Jwt__ClockSkewSeconds', '30', (c: AppConfig) => c.jwt.clockSkewSeconds, 30],
    ['Jwt__RequireActiveSession', 'true', (c: AppConfig) => c.jwt.requireActiveSession, true],
    [
      'Cors__AllowedOrigins',
      ' https://app.example.com, http://localhost:5173/ ,https://Admin.Example.com:443',
      (c: AppConfig) => c.allowedOrigins,
      {
        exact: ['https://app.example.com', 'http://localhost:5173', 'https://admin.example.com'],
        anyPortOf: [],
        any: false,
      },
    ],
    ['Hsts__Enabled', 'true', (c: AppConfig) => c.hsts.enabled, true],
    ['Hsts__MaxAgeSeconds', '86400', (c: AppConfig) => c.hsts.maxAgeSeconds, 86_400],
    ['Hsts__IncludeSubDomains', 'true', (c: AppConfig) => c.hsts.includeSubDomains, true],
    [
      'ConnectionStrings__DefaultConnection',
      'Data Source=/srv/keygate/prod.db',
      (c: AppConfig) => c.database.target,
      { type: 'sqlite', path: '/srv/keygate/prod.db' },
    ],
    [
      'ConnectionStrings__DefaultConnection',
      'postgresql://keygate:pw@db.internal:5432/keygate',
      (c: AppConfig) => c.database.target,
      { type: 'postgres', url: 'postgresql://keygate:pw@db.internal:5432/keygate' },
    ],
    ['Database__PoolSize', '25', (c: AppConfig) => c.database.poolSize, 25],
    [
      'Database__ConnectionTimeoutMs',
      '2000',
      (c: AppConfig) => c.database.connectionTimeoutMs,
      2000,
    ],
    ['Database__StatementTimeoutMs', '3000', (c: AppConfig) => c.database.statementTimeoutMs, 3000],
    ['Database__SqliteCacheSizeMb', '512', (c: AppConfig) => c.database.sqliteCacheSizeMb, 512],
    ['Database__SqliteMmapSizeMb', '0', (c: AppConfig) => c.database.sqliteMmapSizeMb, 0],
    ['Database__SqliteMmapSizeMb', '2047', (c: AppConfig) => c.database.sqliteMmapSizeMb, 2047],
    [
      'Database__SqliteSynchronous',
      'normal',
      (c: AppConfig) => c.database.sqliteSynchronous,
      'normal',
    ],
    [
      'Database__SqliteSynchronous',
      ' FULL ',
      (c: AppConfig) => c.database.sqliteSynchronous,
      'full',
    ],
    ['TokenCleanup__Enabled', 'false', (c: AppConfig) => c.tokenCleanup.enabled, false],
    ['TokenCleanup__Enabled', 'TRUE', (c: AppConfig) => c.tokenCleanup.enabled, true],
    ['TokenCleanup__Enabled', '0', (c: AppConfig) => c.tokenCleanup.enabled, false],
    ['TokenCleanup__IntervalSeconds', '60', (c: AppConfig) => c.tokenCleanup.intervalSeconds, 60],
    ['TokenCleanup__BatchSize', '50', (c: AppConfig) => c.tokenCleanup.batchSize, 50],
    ['TokenCleanup__RetentionDays', '0', (c: AppConfig) => c.tokenCleanup.retentionDays, 0],
    ['Audit__RetentionDays', '30', (c: AppConfig) => c.auditRetention.retentionDays, 30],
    ['Audit__PurgeEnabled', 'true', (c: AppConfig) => c.auditRetention.purgeEnabled, true],
    [
      'Audit__PurgeIntervalSeconds',
      '600',
      (c: AppConfig) => c.auditRetention.purgeIntervalSeconds,
      600,
    ],
    ['Audit__PurgeBatchSize', '10000', (c: AppConfig) => c.auditRetention.purgeBatchSize, 10_000],
    ['Audit__PurgePauseMs', '0', (c: AppConfig) => c.auditRetention.purgePauseMs, 0],
    [
      'TrustedProxies',
      ' 10.0.0.1, 10.1.0.0/16 ,fd00::/8',
      (c: AppConfig) => c.trustedProxies,
      ['10.0.0.1', '10.1.0.0/16', 'fd00::/8'],
    ],
    [
      'PasswordHashing__Iterations',
      '700000',
      (c: AppConfig) => c.passwordHashing.iterations,
      700_000,
    ],
    ['PasswordHashing__Concurrency', '3', (c: AppConfig) => c.passwordHashing.concurrency, 3],
    [
      'UV_THREADPOOL_SIZE',
      '1',
      (c: AppConfig) => c.passwordHashing.concurrency,
      defaultHashingConcurrency(availableParallelism(), '1'),
    ],
    ['Management__Enabled', 'false', (c: AppConfig) => c.management.enabled, false],
    ['Management__Port', '9100', (c: AppConfig) => c.management.port, 9100],
    ['Management__Port', '0', (c: AppConfig) => c.management.port, 0],
    ['Management__Host', '0.0.0.0', (c: AppConfig) => c.management.host, '0.0.0.0'],
    ['Logging__Level', 'silent', (c: AppConfig) => c.logging.level, 'silent'],
    ['Logging__Level', 'debug', (c: AppConfig) => c.logging.level, 'debug'],
    ['Logging__Level', ' WARN ', (c: AppConfig) => c.logging.level, 'warn'],
    ['NODE_ENV', 'development', (c: AppConfig) => c.isDevelopment, true],
    ['NODE_ENV', 'production', (c: AppConfig) => c.isDevelopment, false],
    ['NODE_ENV', 'test', (c: AppConfig) => c.isDevelopment, false],
    ['Jwt__RefreshRetryWindowSeconds', '30', (c: AppConfig) => c.jwt.refreshRetryWindowSeconds, 30],
  ])('should read the override %s=%s', (key, value, read, expected) => {
    const config = sut({ Jwt__SecretKey: SECRET, [key]: value });

    expect(read(config)).toEqual(expected);
  });

  it('should use a configured secret of exactly 32 characters', () => {
    const secret = 's'.repeat(32);

    expect(sut({ Jwt__SecretKey: secret }).jwt.secret).toBe(secret);
  });

  it.each([
    ['an empty secret', { Jwt__SecretKey: '' }, 'Jwt__SecretKey'],
    ['a secret of 31 characters', { Jwt__SecretKey: 'q'.repeat(31) }, 'Jwt__SecretKey'],
    [
      'an empty secret in development',
      { NODE_ENV: 'development', Jwt__SecretKey: '' },
      'Jwt__SecretKey',
    ],
    [
      'a non-numeric access-token lifetime',
      { Jwt__SecretKey: SECRET, Jwt__AccessTokenExpiryMinutes: 'fifteen' },
      'Jwt__AccessTokenExpiryMinutes',
    ],
    [
      'a fractional access-token lifetime',
      { Jwt__SecretKey: SECRET, Jwt__AccessTokenExpiryMinutes: '1.5' },
      'Jwt__AccessTokenExpiryMinutes',
    ],
    [
      'an access-token lifetime of 0 minutes',
      { Jwt__SecretKey: SECRET, Jwt__AccessTokenExpiryMinutes: '0' },
      'Jwt__AccessTokenExpiryMinutes',
    ],
    [
      'a non-numeric refresh-token lifetime',
      { Jwt__SecretKey: SECRET, Jwt__RefreshTokenExpiryDays: '7d' },
      'Jwt__RefreshTokenExpiryDays',
    ],
    [
      'a refresh-token lifetime of 0 days',
      { Jwt__SecretKey: SECRET, Jwt__RefreshTokenExpiryDays: '0' },
      'Jwt__RefreshTokenExpiryDays',
    ],
    [
      'an audit retention of 0 days',
      { Jwt__SecretKey: SECRET, Audit__RetentionDays: '0' },
      'Audit__RetentionDays',
    ],
    [
      'an audit retention beyond a hundred years',
      { Jwt__SecretKey: SECRET, Audit__RetentionDays: '36501' },
      'Audit__RetentionDays',
    ],
    [
      'an audit purge batch above 10,000 rows',
      { Jwt__SecretKey: SECRET, Audit__PurgeBatchSize: '10001' },
      'Audit__PurgeBatchSize',
    ],
    ['a non-numeric port', { Jwt__SecretKey: SECRET, PORT: 'http' }, 'PORT'],
    ['a port above 65535', { Jwt__SecretKey: SECRET, PORT: '65536' }, 'PORT'],
    [
      'a clock skew above 300 seconds',
      { Jwt__SecretKey: SECRET, Jwt__ClockSkewSeconds: '301' },
      'Jwt__ClockSkewSeconds',
    ],
    [
      'fewer than 1000 iterations',
      { Jwt__SecretKey: SECRET, PasswordHashing__Iterations: '999' },
      'PasswordHashing__Iterations',
    ],
    [
      'a hashing concurrency of 0',
      { Jwt__SecretKey: SECRET, PasswordHashing__Concurrency: '0' },
      'PasswordHashing__Concurrency',
    ],
    [
      'a hashing concurrency above 64',
      { Jwt__SecretKey: SECRET, PasswordHashing__Concurrency: '65' },
      'PasswordHashing__Concurrency',
    ],
    [
      'a PostgreSQL URL without a database name',
      { Jwt__SecretKey: SECRET, ConnectionStrings__DefaultConnection: 'postgres://db' },
      'ConnectionStrings__DefaultConnection',
    ],
    ['a pool size of 0', { Jwt__SecretKey: SECRET, Database__PoolSize: '0' }, 'Database__PoolSize'],
    [
      'a non-numeric statement timeout',
      { Jwt__SecretKey: SECRET, Database__StatementTimeoutMs: 'soon' },
      'Database__StatementTimeoutMs',
    ],
    [
      'a SQLite page cache of 0',
      { Jwt__SecretKey: SECRET, Database__SqliteCacheSizeMb: '0' },
      'Database__SqliteCacheSizeMb',
    ],
    [
      'more memory mapping than SQLite allows',
      { Jwt__SecretKey: SECRET, Database__SqliteMmapSizeMb: '2048' },
      'Database__SqliteMmapSizeMb',
    ],
    [
      'a negative memory mapping',
      { Jwt__SecretKey: SECRET, Database__SqliteMmapSizeMb: '-1' },
      'Database__SqliteMmapSizeMb',
    ],
    [
      'an unknown account cache mode',
      { Jwt__SecretKey: SECRET, Database__AccountCache: 'yes' },
      'Database__AccountCache',
    ],
    [
      'an unknown SQLite synchronous mode',
      { Jwt__SecretKey: SECRET, Database__SqliteSynchronous: 'off' },
      'Database__SqliteSynchronous',
    ],
    [
      'a cleanup switch that is not a boolean',
      { Jwt__SecretKey: SECRET, TokenCleanup__Enabled: 'maybe' },
      'TokenCleanup__Enabled',
    ],
    [
      'an unknown log level',
      { Jwt__SecretKey: SECRET, Logging__Level: 'verbose' },
      'Logging__Level',
    ],
    [
      'a trusted proxy that is not an address',
      { Jwt__SecretKey: SECRET, TrustedProxies: '10.0.0.1,proxy.internal' },
      'TrustedProxies',
    ],
    [
      'a trusted range with a bad prefix',
      { Jwt__SecretKey: SECRET, TrustedProxies: '10.0.0.0/33' },
      'TrustedProxies',
    ],
    [
      'a management switch that is not a boolean',
      { Jwt__SecretKey: SECRET, Management__Enabled: 'on' },
      'Management__Enabled',
    ],
    [
      'a management port above 65535',
      { Jwt__SecretKey: SECRET, Management__Port: '70000' },
      'Management__Port',
    ],
    [
      'a management port equal to PORT',
      { Jwt__SecretKey: SECRET, PORT: '8080', Management__Port: '8080' },
      'Management__Port must differ from PORT (both are 8080)',
    ],
    [
      'a management port equal to the default PORT',
      { Jwt__SecretKey: SECRET, Management__Port: '3000' },
      'Management__Port must differ from PORT (both are 3000)',
    ],
    ['production without a secret', { NODE_ENV: 'production' }, 'Jwt__SecretKey is not configured'],
    ['an unset NODE_ENV without a secret', {}, 'Jwt__SecretKey is not configured'],
    [
      'the sample placeholder in production',
      { NODE_ENV: 'production', Jwt__SecretKey: SAMPLE_SECRET_KEY },
      'Jwt__SecretKey is the sample placeholder',
    ],
    [
      'a previous secret shorter than 32 characters',
      { Jwt__SecretKey: SECRET, Jwt__PreviousSecretKeys: `${'p'.repeat(32)},${'q'.repeat(31)}` },
      'Jwt__PreviousSecretKeys: key 2 is shorter than 32 characters',
    ],
    [
      'an encryption key of 31 bytes',
      {
        Jwt__SecretKey: SECRET,
        Mfa__EncryptionKeys: `${Buffer.alloc(32, 1).toString('base64')},${Buffer.alloc(31, 2).toString('base64')}`,
      },
      'Mfa__EncryptionKeys: key 2 is not the base64 of exactly 32 bytes',
    ],
    [
      'an encryption key that is not base64',
      { Jwt__SecretKey: SECRET, Mfa__EncryptionKeys: 'not base64 at all!' },
      'Mfa__EncryptionKeys: key 1 is not the base64 of exactly 32 bytes',
    ],
    [
      'the sample placeholder with NODE_ENV unset',
      { Jwt__SecretKey: SAMPLE_SECRET_KEY },
      'Jwt__SecretKey is the sample placeholder',
    ],
    [
      'an origin wildcard in production',
      { Jwt__SecretKey: SECRET, Cors__AllowedOrigins: 'https://app.example.com,*' },
      'Cors__AllowedOrigins: "*" would let a page on any origin drive registration and login',
    ],
    [
      'a port wildcard in production',
      { Jwt__SecretKey: SECRET, Cors__AllowedOrigins: 'http://localhost:*' },
      'Cors__AllowedOrigins: "http://localhost:*" has a port wildcard, which is refused in production',
    ],
    [
      'an origin with a path',
      { Jwt__SecretKey: SECRET, Cors__AllowedOrigins: 'https://app.example.com/login' },
      'Cors__AllowedOrigins: "https://app.example.com/login" is not an origin',
    ],
    [
      'a session switch that is not a boolean',
      { Jwt__SecretKey: SECRET, Jwt__RequireActiveSession: 'yes' },
      'Jwt__RequireActiveSession',
    ],
    [
      'an HSTS switch that is not a boolean',
      { Jwt__SecretKey: SECRET, Hsts__Enabled: 'on' },
      'Hsts__Enabled',
    ],
    [
      'an HSTS max-age above two years',
      { Jwt__SecretKey: SECRET, Hsts__MaxAgeSeconds: '63072001' },
      'Hsts__MaxAgeSeconds',
    ],
    [
      'a refresh retry window above 300 seconds',
      { Jwt__SecretKey: SECRET, Jwt__RefreshRetryWindowSeconds: '301' },
      'Jwt__RefreshRetryWindowSeconds',
    ],
    [
      'a negative refresh retry window',
      { Jwt__SecretKey: SECRET, Jwt__RefreshRetryWindowSeconds: '-1' },
      'Jwt__RefreshRetryWindowSeconds',
    ],
  ])('should refuse %s with a one-line message naming the key', (_label, raw, expected) => {
    const error = configurationErrorOf(raw);

    expect(error.name).toBe('ConfigurationError');
    expect(error.message).toMatch(/^Invalid configuration: /);
    expect(error.message).toContain(expected);
    expect(error.message).not.toMatch(/[\r\n]/);
  });

  it('should read previous secrets as a comma-separated list, around spaces', () => {
    const [first, second] = ['p'.repeat(32), 'q'.repeat(40)];

    const config = sut({ Jwt__SecretKey: SECRET, Jwt__PreviousSecretKeys: ` ${first} ,${second}` });

    expect(config.jwt.previousSecrets).toEqual([first, second]);
  });

  it('should read encryption keys as a comma-separated list, the first one first', () => {
    const [first, second] = [Buffer.alloc(32, 7), Buffer.alloc(32, 9)];

    const config = sut({
      Jwt__SecretKey: SECRET,
      Mfa__EncryptionKeys: ` ${first.toString('base64')} , ${second.toString('base64url')}`,
      Mfa__Issuer: 'Acme ID',
    });

    expect(config.mfa.issuer).toBe('Acme ID');
    expect(config.mfa.keys.map((k) => k.key)).toEqual([first, second]);
    expect(config.mfa.keys[0].id).toMatch(/^[0-9a-f]{16}$/);
    expect(config.mfa.keys[0].id).not.toBe(config.mfa.keys[1].id);
  });

  it('should never show a rejected encryption key', () => {
    const key = Buffer.alloc(31, 3).toString('base64');

    const error = configurationErrorOf({ Jwt__SecretKey: SECRET, Mfa__EncryptionKeys: key });

    expect(error.message).not.toContain(key);
  });

  it('should never show a rejected previous secret', () => {
    const error = configurationErrorOf({
      Jwt__SecretKey: SECRET,
      Jwt__PreviousSecretKeys: 'short-previous-secret',
    });

    expect(error.message).not.toContain('short-previous-secret');
  });

  it.each([
    ['the management listener is off', { Management__Enabled: 'false', Management__Port: '3000' }],
    ['both ports are 0', { PORT: '0', Management__Port: '0' }],
  ])('should allow equal ports when %s', (_label, raw) => {
    expect(() => sut({ Jwt__SecretKey: SECRET, ...raw })).not.toThrow();
  });

  it('should show the rejected value of a key that is not the secret', () => {
    const error = configurationErrorOf({ Jwt__SecretKey: SECRET, PORT: 'http' });

    expect(error.message).toContain('"http"');
  });

  it('should keep the message on one line when a rejected value contains a line break', () => {
    const error = configurationErrorOf({ Jwt__SecretKey: SECRET, PORT: '80\n80' });

    expect(error.message).toContain('PORT');
    expect(error.message).not.toMatch(/[\r\n]/);
  });

  it('should list every failing key in one message', () => {
    const error = configurationErrorOf({
      PORT: 'http',
      Jwt__AccessTokenExpiryMinutes: '0',
      Jwt__RefreshTokenExpiryDays: 'x',
    });

    expect(error.message).not.toMatch(/[\r\n]/);
    for (const key of [
      'Jwt__SecretKey is not configured',
      'PORT',
      'Jwt__AccessTokenExpiryMinutes',
      'Jwt__RefreshTokenExpiryDays',
    ]) {
      expect(error.message).toContain(key);
    }
  });

  it.each<[string, string, Record<string, string>]>([
    ['too short', 'Sup3r-S3cret-Value-Of-31-Chars!', {}],
    ['too short, next to other failures', 'Sup3r-S3cret-Value-Of-31-Chars!', { PORT: 'http' }],
    ['the placeholder in production', SAMPLE_SECRET_KEY, { NODE_ENV: 'production' }],
  ])('should never echo the secret in the message (%s)', (_label, secret, extra) => {
    const error = configurationErrorOf({ ...extra, Jwt__SecretKey: secret });

    expect(error.message).toContain('Jwt__SecretKey');
    expect(error.message).not.toContain(secret);
  });

  it('should use the sample placeholder and warn in development without a secret', () => {
    const config = sut({ NODE_ENV: 'development' });

    expect(config.isDevelopment).toBe(true);
    expect(config.jwt.secret).toBe(SAMPLE_SECRET_KEY);
    expect(config.warnings).toHaveLength(1);
    expect(config.warnings[0]).toContain('Jwt__SecretKey');
    expect(config.warnings[0]).not.toContain(SAMPLE_SECRET_KEY);
  });

  it('should accept the sample placeholder in development', () => {
    const config = sut({ NODE_ENV: 'development', Jwt__SecretKey: SAMPLE_SECRET_KEY });

    expect(config.jwt.secret).toBe(SAMPLE_SECRET_KEY);
  });

  it('should warn when the iterations are below the OWASP level, without failing', () => {
    const config = sut({ Jwt__SecretKey: SECRET, PasswordHashing__Iterations: '1000' });

    expect(config.passwordHashing.iterations).toBe(1000);
    expect(config.warnings).toEqual([expect.stringContaining('PasswordHashing__Iterations')]);
    expect(config.warnings[0]).toContain('600000');
  });

  it('should turn the account cache on only on PostgreSQL, and only when asked', () => {
    const postgres = {
      Jwt__SecretKey: SECRET,
      ConnectionStrings__DefaultConnection: 'postgres://db/keygate',
    };

    expect(sut(postgres).database.accountCache).toBe(false);
    expect(sut({ ...postgres, Database__AccountCache: ' ON ' }).database.accountCache).toBe(true);
    expect(sut({ ...postgres, Database__AccountCache: 'on' }).warnings).toEqual([]);
  });

  it('should ignore the account cache on SQLite, with a warning', () => {
    const config = sut({ Jwt__SecretKey: SECRET, Database__AccountCache: 'on' });

    expect(config.database.accountCache).toBe(false);
    expect(config.warnings).toEqual([
      'Database__AccountCache=on is ignored on SQLite: account reads are local there.',
    ]);
  });

  it('should not warn at the OWASP level', () => {
    const config = sut({ Jwt__SecretKey: SECRET, PasswordHashing__Iterations: '600000' });

    expect(config.warnings).toEqual([]);
  });

  it('should never put the secret in a warning', () => {
    const config = sut({ Jwt__SecretKey: SECRET, PasswordHashing__Iterations: '1000' });

    expect(config.warnings.join('\n')).not.toContain(SECRET);
  });
});

describe(defaultHashingConcurrency.name, () => {
  it.each<[number, unknown, number]>([
    [2, undefined, 2],
    [1, undefined, 1],
    [8, undefined, 3],
    [8, '16', 8],
    [16, '8', 7],
    [4, '1', 1],
    [4, 'many', 3],
    [4, '0', 3],
  ])(
    'should hash %i at once on %i cores with UV_THREADPOOL_SIZE=%s',
    (cores, poolSize, expected) => {
      expect(defaultHashingConcurrency(cores, poolSize)).toBe(expected);
    },
  );
});

describe(AppConfigModule.name, () => {
  it('should provide the validated AppConfig through @nestjs/config', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        await AppConfigModule.forRoot({
          environment: {
            Jwt__SecretKey: SECRET,
            PORT: '4000',
            Jwt__Issuer: 'issuer-from-record',
            ConnectionStrings__DefaultConnection: ':memory:',
          },
        }),
      ],
    }).compile();

    const sut = moduleRef.get(AppConfig);

    expect(sut).toBeInstanceOf(AppConfig);
    expect(sut.port).toBe(4000);
    expect(sut.jwt.secret).toBe(SECRET);
    expect(sut.jwt.issuer).toBe('issuer-from-record');
    expect(sut.jwt.accessTokenExpiryMinutes).toBe(15);
    expect(sut.database.target).toEqual({ type: 'sqlite', path: ':memory:' });
    await moduleRef.close();
  });

  it('should read only the given record, not the process environment', async () => {
    const saved = process.env.Jwt__Audience;
    process.env.Jwt__Audience = 'audience-from-process';
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [await AppConfigModule.forRoot({ environment: { Jwt__SecretKey: SECRET } })],
      }).compile();

      expect(moduleRef.get(AppConfig).jwt.audience).toBe('keygate-clients');
      await moduleRef.close();
    } finally {
      if (saved === undefined) {
        delete process.env.Jwt__Audience;
      } else {
        process.env.Jwt__Audience = saved;
      }
    }
  });

  it('should let overrides win over the environment', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        await AppConfigModule.forRoot({
          environment: { Jwt__SecretKey: SECRET, TokenCleanup__Enabled: 'true', PORT: '4000' },
          overrides: { TokenCleanup__Enabled: 'false' },
        }),
      ],
    }).compile();

    const sut = moduleRef.get(AppConfig);

    expect(sut.tokenCleanup.enabled).toBe(false);
    expect(sut.port).toBe(4000);
    await moduleRef.close();
  });

  it('should reject with a ConfigurationError before any module is built', async () => {
    const forRoot = AppConfigModule.forRoot({ environment: { Jwt__SecretKey: 'too-short' } });

    await expect(forRoot).rejects.toThrow(ConfigurationError);
    await expect(forRoot).rejects.toThrow(/Jwt__SecretKey/);
  });
});

describe('the signing settings', () => {
  const SEAL = Buffer.alloc(32, 9).toString('base64');

  it('should accept an asymmetric algorithm with Keys__EncryptionKeys', () => {
    const config = loadAppConfig({
      Jwt__SecretKey: SECRET,
      Jwt__SigningAlgorithm: 'EdDSA',
      Keys__EncryptionKeys: SEAL,
    });

    expect(config.keys.signingAlgorithm).toBe('EdDSA');
    expect(config.keys.encryptionKeys).toHaveLength(1);
  });

  it.each([
    [
      'an asymmetric algorithm without Keys__EncryptionKeys',
      { Jwt__SigningAlgorithm: 'ES256' },
      'Keys__EncryptionKeys is required when Jwt__SigningAlgorithm is ES256: private signing keys are stored only encrypted',
    ],
    [
      'an algorithm Keygate does not sign with',
      { Jwt__SigningAlgorithm: 'HS512' },
      'Jwt__SigningAlgorithm must be one of the following values: HS256, ES256, EdDSA, RS256 (got "HS512")',
    ],
    [
      'an encryption key of the wrong size',
      { Keys__EncryptionKeys: Buffer.alloc(16).toString('base64') },
      'Keys__EncryptionKeys: key 1 is not the base64 of exactly 32 bytes',
    ],
  ])('should refuse %s, never echoing a key', (_label, environment, problem) => {
    expect(configurationErrorOf({ Jwt__SecretKey: SECRET, ...environment }).message).toBe(
      `Invalid configuration: ${problem}`,
    );
  });
});
