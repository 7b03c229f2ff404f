import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { parseAllowedOrigins, type AllowedOrigins } from './allowed-origins.js';
import { parseConnectionString, type DatabaseTarget } from './connection-string.js';
import {
  EnvironmentVariables,
  OWASP_PBKDF2_SHA256_ITERATIONS,
  SAMPLE_SECRET_KEY,
  type LoggingLevel,
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
}

export interface TokenCleanupConfig {
  readonly enabled: boolean;
  readonly intervalSeconds: number;
  readonly batchSize: number;
  readonly retentionDays: number;
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
  readonly management: ManagementConfig;
  readonly logging: LoggingConfig;
  /** The web front ends that may call the API from a browser; none by default. */
  readonly allowedOrigins: AllowedOrigins;
  readonly hsts: HstsConfig;
  /** Addresses and CIDR ranges whose X-Forwarded-For header is believed; empty by default. */
  readonly trustedProxies: readonly string[];
  /** Start-up warnings, logged once the logger exists. Never contains a secret. */
  readonly warnings: readonly string[];
}

/** Thrown when the environment is invalid; its message is one line listing every failing key. */
export class ConfigurationError extends Error {
  constructor(problems: readonly string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigurationError';
  }
}

const MIN_SECRET_CHARS = 32;
const SECRET_KEYS = new Set(['Jwt__SecretKey', 'Jwt__PreviousSecretKeys']);

/** The key that `validate` stores the typed configuration under in `@nestjs/config`. */
export const APP_CONFIG_KEY = 'keygate';

/** Validates the raw environment once and returns the typed configuration, or throws. */
export function loadAppConfig(raw: Record<string, unknown>): AppConfig {
  const env = plainToInstance(EnvironmentVariables, withoutEmptyOptionalValues(raw), {
    enableImplicitConversion: false,
  });
  const problems = validateSync(env, { skipMissingProperties: false }).flatMap(describe(raw));

  const isDevelopment = env.NODE_ENV === 'development';
  const warnings: string[] = [];
  let secret = env.Jwt__SecretKey;
  if (secret === undefined) {
    if (isDevelopment) {
      secret = SAMPLE_SECRET_KEY;
      warnings.push(
        'Jwt__SecretKey is not configured: using the sample placeholder, which is refused in production.',
      );
    } else {
      problems.unshift('Jwt__SecretKey is not configured');
    }
  } else if (secret === SAMPLE_SECRET_KEY && !isDevelopment) {
    problems.unshift('Jwt__SecretKey is the sample placeholder, which is refused in production');
  }

  let target: DatabaseTarget | undefined;
  try {
    target = parseConnectionString(env.ConnectionStrings__DefaultConnection);
  } catch (error: unknown) {
    problems.push(error instanceof Error ? error.message : String(error));
  }
  const previousSecrets = splitList(env.Jwt__PreviousSecretKeys);
  previousSecrets.forEach((previous, index) => {
    if (previous.length < MIN_SECRET_CHARS) {
      problems.push(
        `Jwt__PreviousSecretKeys: key ${index + 1} is shorter than ${MIN_SECRET_CHARS} characters`,
      );
    }
  });
  const trustedProxies = splitList(env.TrustedProxies);
  const badProxy = trustedProxies.find((entry) => !isAddressOrRange(entry));
  if (badProxy !== undefined) {
    problems.push(`TrustedProxies: "${badProxy}" is not an IP address or CIDR range`);
  }

  const allowedOrigins = parseAllowedOrigins(splitList(env.Cors__AllowedOrigins), isDevelopment);
  problems.push(...allowedOrigins.problems);
  warnings.push(...allowedOrigins.warnings);

  // Port 0 asks the system for a free port, so only a fixed port can collide.
  if (env.Management__Enabled && env.Management__Port !== 0 && env.Management__Port === env.PORT) {
    problems.push(`Management__Port must differ from PORT (both are ${env.PORT})`);
  }

  if (problems.length > 0 || secret === undefined || target === undefined) {
    throw new ConfigurationError(problems);
  }
  if (env.PasswordHashing__Iterations < OWASP_PBKDF2_SHA256_ITERATIONS) {
    warnings.push(
      `PasswordHashing__Iterations is ${env.PasswordHashing__Iterations}, below the OWASP level of ${OWASP_PBKDF2_SHA256_ITERATIONS}.`,
    );
  }

  return Object.assign(new AppConfig(), {
    isDevelopment,
    port: env.PORT,
    host: env.HOST,
    jwt: {
      secret,
      previousSecrets,
      issuer: env.Jwt__Issuer,
      audience: env.Jwt__Audience,
      accessTokenExpiryMinutes: env.Jwt__AccessTokenExpiryMinutes,
      refreshTokenExpiryDays: env.Jwt__RefreshTokenExpiryDays,
      clockSkewSeconds: env.Jwt__ClockSkewSeconds,
      requireActiveSession: env.Jwt__RequireActiveSession,
    },
    database: {
      target,
      poolSize: env.Database__PoolSize,
      connectionTimeoutMs: env.Database__ConnectionTimeoutMs,
      statementTimeoutMs: env.Database__StatementTimeoutMs,
    },
    passwordHashing: {
      iterations: env.PasswordHashing__Iterations,
      concurrency:
        env.PasswordHashing__Concurrency ??
        defaultHashingConcurrency(availableParallelism(), raw.UV_THREADPOOL_SIZE),
    },
    tokenCleanup: {
      enabled: env.TokenCleanup__Enabled,
      intervalSeconds: env.TokenCleanup__IntervalSeconds,
      batchSize: env.TokenCleanup__BatchSize,
      retentionDays: env.TokenCleanup__RetentionDays,
    },
    management: {
      enabled: env.Management__Enabled,
      port: env.Management__Port,
      host: env.Management__Host,
    },
    logging: { level: env.Logging__Level },
    allowedOrigins: allowedOrigins.origins,
    hsts: {
      enabled: env.Hsts__Enabled,
      maxAgeSeconds: env.Hsts__MaxAgeSeconds,
      includeSubDomains: env.Hsts__IncludeSubDomains,
    },
    trustedProxies,
    warnings,
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
