import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { parseAllowedOrigins, type AllowedOrigins } from './settings/allowed-origins.js';
import { parseConnectionString, type DatabaseTarget } from './settings/connection-string.js';
import {
  accountFlows,
  checkMail,
  type AccountFlowsConfig,
  type MailConfig,
} from './settings/mail-settings.js';
import { checkMfa, type MfaConfig } from './settings/mfa-settings.js';
import { checkKeys, type KeysConfig } from './settings/keys-settings.js';
import { checkWebhooks, type WebhooksConfig } from './settings/webhook-settings.js';
import { checkPasskeys, type PasskeysConfig } from './settings/passkeys-settings.js';
import { checkOAuthServer, type OAuthServerConfig } from './settings/oauth-server-settings.js';
import { checkFederation, type FederationConfig } from './settings/federation-settings.js';
import {
  EnvironmentVariables,
  MIN_SECRET_LENGTH,
  OWASP_PBKDF2_SHA256_ITERATIONS,
  SAMPLE_SECRET_KEY,
  type LoggingLevel,
  type SqliteSynchronous,
  type AdminApiListener,
} from './environment-variables.js';

export interface JwtConfig {
  readonly secret: string;
  /** Accepted for verification only, so tokens signed before a rotation keep working. */
  readonly previousSecrets: readonly string[];
  readonly issuer: string;
  readonly audience: string;
  readonly accessTokenExpiryMinutes: number;
  readonly refreshTokenExpiryDays: number;
  readonly clockSkewSeconds: number;
  /** Protected routes refuse access tokens whose session has ended; otherwise tokens are stateless. */
  readonly requireActiveSession: boolean;
  /**
   * How long a rotated token, presented again while it is its session's newest token's immediate
   * predecessor, answers the same pair again (a lost answer's retry); 0: never, reuse as today.
   */
  readonly refreshRetryWindowSeconds: number;
}

export interface PasswordHashingConfig {
  readonly iterations: number;
  /** Hashes computed at once; the others wait their turn. */
  readonly concurrency: number;
}

export interface DatabaseConfig {
  readonly target: DatabaseTarget;
  /** PostgreSQL only: connections per instance. */
  readonly poolSize: number;
  readonly connectionTimeoutMs: number;
  readonly statementTimeoutMs: number;
  /** SQLite only: page cache per process, in MiB. */
  readonly sqliteCacheSizeMb: number;
  /** SQLite only: bytes of the file read through memory mapping, in MiB; 0 for none. */
  readonly sqliteMmapSizeMb: number;
  /** SQLite only: `full` acknowledges a commit once it is fsynced; `normal` survives a process crash only. */
  readonly sqliteSynchronous: SqliteSynchronous;
  /**
   * PostgreSQL only: keep account state in the instance, invalidated through LISTEN/NOTIFY
   * (src/users/account-cache). Always false on SQLite, where the setting is ignored.
   */
  readonly accountCache: boolean;
}

export interface TokenCleanupConfig {
  readonly enabled: boolean;
  readonly intervalSeconds: number;
  readonly batchSize: number;
  readonly retentionDays: number;
}

/** The audit trail's retention window and its purge. */
export interface AuditRetentionConfig {
  readonly retentionDays: number;
  /** The purge runs on a timer; otherwise only `audit:purge` runs it. */
  readonly purgeEnabled: boolean;
  readonly purgeIntervalSeconds: number;
  readonly purgeBatchSize: number;
  readonly purgePauseMs: number;
}

export interface ManagementConfig {
  /** Off: no listener, and no metrics are collected. */
  readonly enabled: boolean;
  readonly port: number;
  readonly host: string;
}

/** Strict-Transport-Security; off unless TLS is terminated in front of the service. */
export interface HstsConfig {
  readonly enabled: boolean;
  readonly maxAgeSeconds: number;
  readonly includeSubDomains: boolean;
}

export interface HttpConfig {
  /** Longest a client may take to send a whole request (headers and body) before a 408. */
  readonly requestTimeoutMs: number;
  /** Longest an answer may take to go out once started; then its connection is closed. */
  readonly responseTimeoutMs: number;
}

export interface SessionsConfig {
  /** Active sessions one account may hold; a login past it ends the least recently used one. */
  readonly maxActivePerUser: number;
}

/** Sign-in with a one-time code mailed to the address; its link's page is in MailConfig.links. */
export interface EmailCodeConfig {
  /** Off: its routes answer 404. On only with mail (checked at start-up). */
  readonly enabled: boolean;
  readonly codeLength: number;
  readonly lifetimeMinutes: number;
  readonly maxAttempts: number;
}

export interface LoggingConfig {
  readonly level: LoggingLevel;
}

/** Typed, validated configuration. Inject this class; nothing else reads the environment. */
export class AppConfig {
  readonly isDevelopment: boolean;
  readonly port: number;
  readonly host: string;
  readonly jwt: JwtConfig;
  readonly database: DatabaseConfig;
  readonly passwordHashing: PasswordHashingConfig;
  readonly tokenCleanup: TokenCleanupConfig;
  readonly auditRetention: AuditRetentionConfig;
  readonly management: ManagementConfig;
  readonly logging: LoggingConfig;
  /** Password change and reset, e-mail verification and change. */
  readonly accountFlows: AccountFlowsConfig;
  readonly mail: MailConfig;
  /** The TOTP second factor: the issuer shown, and the keys that encrypt secrets at rest. */
  readonly mfa: MfaConfig;
  readonly http: HttpConfig;
  readonly sessions: SessionsConfig;
  /** The web front ends that may call the API from a browser; none by default. */
  readonly allowedOrigins: AllowedOrigins;
  readonly hsts: HstsConfig;
  /** Addresses and CIDR ranges whose X-Forwarded-For header is believed; empty by default. */
  readonly trustedProxies: readonly string[];
  /** Start-up warnings, logged once the logger exists. Never contains a secret. */
  readonly warnings: readonly string[];
  /** How access tokens are signed, and the key set's timing (src/keys). */
  readonly keys: KeysConfig;
  readonly emailCode: EmailCodeConfig;
  /** Webhook subscriptions' secrets at rest and their delivery. */
  readonly webhooks: WebhooksConfig;
  /** Passkeys (WebAuthn): the relying party and its origins; null when off (the default). */
  readonly passkeys: PasskeysConfig | null;
  /** Sign-in through other identity providers; null when off (the default). */
  readonly federation: FederationConfig | null;
  readonly adminApi: AdminApiConfig;
  /** Keygate as an OpenID provider (src/oauth-server); null when off (the default). */
  readonly oauthServer: OAuthServerConfig | null;
}

export interface AdminApiConfig {
  /** The listener that serves `/api/admin/`; the other answers 404 there. */
  readonly listener: AdminApiListener;
}

/** Thrown when the environment is invalid; its message is one line listing every failing key. */
export class ConfigurationError extends Error {
  constructor(problems: readonly string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigurationError';
  }
}

/** Keys whose values are never echoed: secrets, and a URL that may carry a password. */
const SECRET_KEYS = new Set([
  'Jwt__SecretKey',
  'Jwt__PreviousSecretKeys',
  'Smtp__Url',
  'Mfa__EncryptionKeys',
  'Keys__EncryptionKeys',
  'Webhooks__EncryptionKeys',
  'Federation__Providers',
]);

/** The key that `validate` stores the typed configuration under in `@nestjs/config`. */
export const APP_CONFIG_KEY = 'keygate';

/**
 * Validates the raw environment once and returns the typed configuration, or throws one
 * ConfigurationError listing every problem: the signing secret's first, then each key's own, then
 * those between keys.
 */
export function loadAppConfig(raw: Record<string, unknown>): AppConfig {
  const { env, problems: invalidKeys } = parse(raw);
  const secret = signingSecret(env);
  const checked = checkAcrossKeys(env);
  const problems = [...secret.problems, ...invalidKeys, ...checked.problems];
  if (
    problems.length > 0 ||
    secret.value === undefined ||
    checked.target === undefined ||
    checked.mail === undefined ||
    checked.mfa === undefined ||
    checked.keys === undefined ||
    checked.webhooks === undefined
  ) {
    throw new ConfigurationError(problems);
  }
  return assemble(env, {
    secret: secret.value,
    target: checked.target,
    mail: checked.mail,
    mfa: checked.mfa,
    keys: checked.keys,
    previousSecrets: checked.previousSecrets,
    trustedProxies: checked.trustedProxies,
    allowedOrigins: checked.allowedOrigins,
    threadPoolSize: raw.UV_THREADPOOL_SIZE,
    warnings: [
      ...secret.warnings,
      ...checked.warnings,
      ...costWarnings(env),
      ...accountCacheWarnings(env, checked.target),
    ],
    webhooks: checked.webhooks,
    passkeys: checked.passkeys,
    oauthServer: checked.oauthServer,
    federation: checked.federation,
  });
}

/** Step 1: each key against its own rule, defaults applied. */
function parse(raw: Record<string, unknown>): { env: EnvironmentVariables; problems: string[] } {
  const env = plainToInstance(EnvironmentVariables, withoutEmptyOptionalValues(raw), {
    enableImplicitConversion: false,
  });
  const problems = validateSync(env, { skipMissingProperties: false }).flatMap(describe(raw));
  return { env, problems };
}

/** Step 2a: the signing secret, which depends on the mode. */
function signingSecret(env: EnvironmentVariables): {
  value?: string;
  problems: string[];
  warnings: string[];
} {
  const isDevelopment = env.NODE_ENV === 'development';
  const secret = env.Jwt__SecretKey;
  if (secret === undefined && isDevelopment) {
    return {
      value: SAMPLE_SECRET_KEY,
      problems: [],
      warnings: [
        'Jwt__SecretKey is not configured: using the sample placeholder, which is refused in production.',
      ],
    };
  }
  if (secret === undefined) {
    return { problems: ['Jwt__SecretKey is not configured'], warnings: [] };
  }
  if (secret === SAMPLE_SECRET_KEY && !isDevelopment) {
    return {
      problems: ['Jwt__SecretKey is the sample placeholder, which is refused in production'],
      warnings: [],
    };
  }
  return { value: secret, problems: [], warnings: [] };
}

/** Step 2b: the values read from several keys or from a list, and the rules between keys. */
function checkAcrossKeys(env: EnvironmentVariables): {
  target?: DatabaseTarget;
  mail?: MailConfig;
  mfa?: MfaConfig;
  keys?: KeysConfig;
  previousSecrets: string[];
  trustedProxies: string[];
  allowedOrigins: AllowedOrigins;
  problems: string[];
  warnings: readonly string[];
  webhooks?: WebhooksConfig;
  passkeys: PasskeysConfig | null;
  oauthServer: OAuthServerConfig | null;
  federation: FederationConfig | null;
} {
  const problems: string[] = [];
  let target: DatabaseTarget | undefined;
  try {
    target = parseConnectionString(env.ConnectionStrings__DefaultConnection);
  } catch (error: unknown) {
    problems.push(error instanceof Error ? error.message : String(error));
  }
  const previousSecrets = splitList(env.Jwt__PreviousSecretKeys);
  previousSecrets.forEach((previous, index) => {
    if (previous.length < MIN_SECRET_LENGTH) {
      problems.push(
        `Jwt__PreviousSecretKeys: key ${index + 1} is shorter than ${MIN_SECRET_LENGTH} characters`,
      );
    }
  });
  const trustedProxies = splitList(env.TrustedProxies);
  const badProxy = trustedProxies.find((entry) => !isAddressOrRange(entry));
  if (badProxy !== undefined) {
    problems.push(`TrustedProxies: "${badProxy}" is not an IP address or CIDR range`);
  }
  const allowedOrigins = parseAllowedOrigins(
    splitList(env.Cors__AllowedOrigins),
    env.NODE_ENV === 'development',
  );
  problems.push(...allowedOrigins.problems);
  // Port 0 asks the system for a free port, so only a fixed port can collide.
  if (env.Management__Enabled && env.Management__Port !== 0 && env.Management__Port === env.PORT) {
    problems.push(`Management__Port must differ from PORT (both are ${env.PORT})`);
  }
  const { mail, problems: mailProblems } = checkMail(env, env.NODE_ENV === 'development');
  problems.push(...mailProblems);
  const { mfa, problems: mfaProblems } = checkMfa(env);
  problems.push(...mfaProblems);
  const { keys, problems: keysProblems } = checkKeys(env);
  problems.push(...keysProblems);
  const { webhooks, problems: webhookProblems } = checkWebhooks(env);
  problems.push(...webhookProblems);
  const { passkeys, problems: passkeyProblems } = checkPasskeys(
    env,
    env.NODE_ENV === 'development',
  );
  problems.push(...passkeyProblems);
  const { oauthServer, problems: oauthProblems } = checkOAuthServer(env, process.version);
  problems.push(...oauthProblems);
  const { federation, problems: federationProblems } = checkFederation(env);
  problems.push(...federationProblems);
  if (env.AdminApi__Listener === 'management' && !env.Management__Enabled) {
    problems.push('AdminApi__Listener=management needs Management__Enabled=true');
  }
  return {
    target,
    mail,
    mfa,
    keys,
    previousSecrets,
    trustedProxies,
    allowedOrigins: allowedOrigins.origins,
    problems,
    warnings: allowedOrigins.warnings,
    webhooks,
    passkeys,
    oauthServer,
    federation,
  };
}

function costWarnings(env: EnvironmentVariables): string[] {
  return env.PasswordHashing__Iterations < OWASP_PBKDF2_SHA256_ITERATIONS
    ? [
        `PasswordHashing__Iterations is ${env.PasswordHashing__Iterations}, below the OWASP level of ${OWASP_PBKDF2_SHA256_ITERATIONS}.`,
      ]
    : [];
}

/** The account cache is for PostgreSQL; on SQLite reads are local and the setting is ignored. */
function accountCacheWarnings(env: EnvironmentVariables, target: DatabaseTarget): string[] {
  return env.Database__AccountCache === 'on' && target.type !== 'postgres'
    ? ['Database__AccountCache=on is ignored on SQLite: account reads are local there.']
    : [];
}

/** Step 3: the typed configuration, from keys that passed every check. */
function assemble(
  env: EnvironmentVariables,
  checked: {
    readonly secret: string;
    readonly target: DatabaseTarget;
    readonly mail: MailConfig;
    readonly mfa: MfaConfig;
    readonly keys: KeysConfig;
    readonly previousSecrets: readonly string[];
    readonly trustedProxies: readonly string[];
    readonly allowedOrigins: AllowedOrigins;
    readonly threadPoolSize: unknown;
    readonly warnings: readonly string[];
    readonly webhooks: WebhooksConfig;
    readonly passkeys: PasskeysConfig | null;
    readonly oauthServer: OAuthServerConfig | null;
    readonly federation: FederationConfig | null;
  },
): AppConfig {
  return Object.assign(new AppConfig(), {
    isDevelopment: env.NODE_ENV === 'development',
    port: env.PORT,
    host: env.HOST,
    jwt: {
      secret: checked.secret,
      previousSecrets: checked.previousSecrets,
      issuer: env.Jwt__Issuer,
      audience: env.Jwt__Audience,
      accessTokenExpiryMinutes: env.Jwt__AccessTokenExpiryMinutes,
      refreshTokenExpiryDays: env.Jwt__RefreshTokenExpiryDays,
      clockSkewSeconds: env.Jwt__ClockSkewSeconds,
      requireActiveSession: env.Jwt__RequireActiveSession,
      refreshRetryWindowSeconds: env.Jwt__RefreshRetryWindowSeconds,
    },
    database: {
      target: checked.target,
      poolSize: env.Database__PoolSize,
      connectionTimeoutMs: env.Database__ConnectionTimeoutMs,
      statementTimeoutMs: env.Database__StatementTimeoutMs,
      sqliteCacheSizeMb: env.Database__SqliteCacheSizeMb,
      sqliteMmapSizeMb: env.Database__SqliteMmapSizeMb,
      sqliteSynchronous: env.Database__SqliteSynchronous,
      accountCache: env.Database__AccountCache === 'on' && checked.target.type === 'postgres',
    },
    passwordHashing: {
      iterations: env.PasswordHashing__Iterations,
      concurrency:
        env.PasswordHashing__Concurrency ??
        defaultHashingConcurrency(availableParallelism(), checked.threadPoolSize),
    },
    tokenCleanup: {
      enabled: env.TokenCleanup__Enabled,
      intervalSeconds: env.TokenCleanup__IntervalSeconds,
      batchSize: env.TokenCleanup__BatchSize,
      retentionDays: env.TokenCleanup__RetentionDays,
    },
    auditRetention: {
      retentionDays: env.Audit__RetentionDays,
      purgeEnabled: env.Audit__PurgeEnabled,
      purgeIntervalSeconds: env.Audit__PurgeIntervalSeconds,
      purgeBatchSize: env.Audit__PurgeBatchSize,
      purgePauseMs: env.Audit__PurgePauseMs,
    },
    management: {
      enabled: env.Management__Enabled,
      port: env.Management__Port,
      host: env.Management__Host,
    },
    logging: { level: env.Logging__Level },
    accountFlows: accountFlows(env),
    mail: checked.mail,
    mfa: checked.mfa,
    http: {
      requestTimeoutMs: env.Http__RequestTimeoutSeconds * 1000,
      responseTimeoutMs: env.Http__ResponseTimeoutSeconds * 1000,
    },
    sessions: { maxActivePerUser: env.Sessions__MaxActivePerUser },
    allowedOrigins: checked.allowedOrigins,
    hsts: {
      enabled: env.Hsts__Enabled,
      maxAgeSeconds: env.Hsts__MaxAgeSeconds,
      includeSubDomains: env.Hsts__IncludeSubDomains,
    },
    trustedProxies: checked.trustedProxies,
    warnings: checked.warnings,
    keys: checked.keys,
    emailCode: {
      enabled: env.EmailCode__Enabled,
      codeLength: env.EmailCode__CodeLength,
      lifetimeMinutes: env.EmailCode__LifetimeMinutes,
      maxAttempts: env.EmailCode__MaxAttempts,
    },
    webhooks: checked.webhooks,
    passkeys: checked.passkeys,
    federation: checked.federation,
    adminApi: { listener: env.AdminApi__Listener },
    oauthServer: checked.oauthServer,
  });
}

/**
 * An exported-but-empty variable (`PORT=`) means "use the default" for every key but the
 * secret, where an empty value is a mistake worth stopping for.
 */
function withoutEmptyOptionalValues(raw: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(raw).filter(([key, value]) => value !== '' || key === 'Jwt__SecretKey'),
  );
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) {
    return false;
  }
  if (prefix === undefined) {
    return true;
  }
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
}

function describe(raw: Record<string, unknown>) {
  return (error: ValidationError): string[] => {
    const reasons = Object.values(error.constraints ?? {});
    // Never echo the value of a secret back into a log line.
    // JSON quoting keeps a value with a line break on the one line of the message.
    const shown = SECRET_KEYS.has(error.property)
      ? ''
      : ` (got ${JSON.stringify(String(raw[error.property]))})`;
    return reasons.length > 0 ? [`${reasons.join(', ')}${shown}`] : [];
  };
}

/** libuv's thread pool size when UV_THREADPOOL_SIZE is not set. */
const LIBUV_DEFAULT_POOL_SIZE = 4;

/**
 * One hash per core, so logins use the whole machine, but always at least one libuv thread left
 * for everything else that runs there (file system, DNS, other crypto): hashing never fills the
 * pool, and never takes more cores than the machine has, so the event loop keeps its own.
 */
export function defaultHashingConcurrency(cores: number, threadPoolSize: unknown): number {
  const poolSize = Number(threadPoolSize);
  const threads =
    Number.isSafeInteger(poolSize) && poolSize > 0 ? poolSize : LIBUV_DEFAULT_POOL_SIZE;
  return Math.max(1, Math.min(cores, threads - 1));
}
