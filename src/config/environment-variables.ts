import { applyDecorators } from '@nestjs/common';
import { Transform, Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  Min,
  MinLength,
} from 'class-validator';

export const SAMPLE_SECRET_KEY = 'keygate-sample-secret-replace-me-in-production-0123456789';
export const DEFAULT_ISSUER = 'keygate';
export const DEFAULT_AUDIENCE = 'keygate-clients';
/** Spec §8: the shortest signing secret accepted, current or previous. */
export const MIN_SECRET_LENGTH = 32;
export const DEFAULT_CONNECTION_STRING = 'Data Source=data/keygate.db';
/**
 * SQLite's page cache per process, in MiB. Reads of the checkpointed file go through the memory
 * mapping below, so this cache mostly holds pages still in the write-ahead log and the pages a
 * write changes. A database larger than the mapping wants more (docs/performance.md, sizing);
 * measured in docs/decisions/0026.
 */
export const DEFAULT_SQLITE_CACHE_SIZE_MB = 16;
/** How much of the SQLite file is read through memory mapping, in MiB (0: none). */
export const DEFAULT_SQLITE_MMAP_SIZE_MB = 256;
/** SQLite's upper bound for memory mapping in this build (SQLITE_MAX_MMAP_SIZE, 0x7fff0000). */
export const MAX_SQLITE_MMAP_SIZE_MB = 2_047;
/** The default port of the OpenTelemetry Prometheus exporter, a common choice for metrics. */
export const DEFAULT_MANAGEMENT_PORT = 9464;
/** One year: what browsers' HSTS preload lists ask for, and the usual advice. */
export const HSTS_DEFAULT_MAX_AGE_SECONDS = 31_536_000;
/** Two years: longer gains nothing, and a mistake would outlive any fix. */
export const HSTS_MAX_AGE_LIMIT_SECONDS = 63_072_000;
/** OWASP Password Storage Cheat Sheet level for PBKDF2-HMAC-SHA256. */
export const OWASP_PBKDF2_SHA256_ITERATIONS = 600_000;
/** A hundred years: the longest audit retention accepted. */
export const AUDIT_RETENTION_DAYS_LIMIT = 36_500;
/** pino's level names, most severe first; `silent` writes nothing. */
export const LOGGING_LEVELS = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
] as const;
export type LoggingLevel = (typeof LOGGING_LEVELS)[number];
/**
 * SQLite's `synchronous` in WAL mode: `full` fsyncs the WAL at every commit, so an acknowledged
 * write survives a power cut; `normal` fsyncs only at checkpoints and survives a process crash only.
 */
export const SQLITE_SYNCHRONOUS_MODES = ['full', 'normal'] as const;
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS_MODES)[number];

/** `Database__AccountCache`: `off` (every protected request reads its account) or `on`. */
export const ACCOUNT_CACHE_MODES = ['off', 'on'] as const;
export type AccountCacheMode = (typeof ACCOUNT_CACHE_MODES)[number];
/**
 * How access tokens are signed: HS256 under Jwt__SecretKey (the interface, the default), or one of
 * the asymmetric algorithms, with the key set's current key (src/keys).
 */
export const SIGNING_ALGORITHMS = ['HS256', 'ES256', 'EdDSA', 'RS256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];
/** A day: the longest a JWKS may be cached, so a rotation never waits longer than that. */
export const JWKS_MAX_AGE_LIMIT_SECONDS = 86_400;

export const ADMIN_API_LISTENERS = ['public', 'management'] as const;
export type AdminApiListener = (typeof ADMIN_API_LISTENERS)[number];

/** OAuthServer__DynamicRegistration: who may register a client at /oauth/register. */
export const DYNAMIC_REGISTRATION_MODES = ['off', 'open', 'initial-access-token'] as const;
export type DynamicRegistrationMode = (typeof DYNAMIC_REGISTRATION_MODES)[number];

/**
 * The raw environment, one property per key, named exactly as the variable.
 * Defaults sit on the properties; `loadAppConfig` turns this into `AppConfig`.
 */
export class EnvironmentVariables {
  /** Only `development` turns on development mode; anything else, unset included, is production. */
  @IsOptional()
  @IsString()
  NODE_ENV?: string;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  @IsNotEmpty()
  HOST = '0.0.0.0';

  /** Left undefined here so that "not configured" can be told apart from the placeholder. */
  @IsOptional()
  @IsString()
  @MinLength(MIN_SECRET_LENGTH)
  Jwt__SecretKey?: string;

  /** Comma-separated secrets that verify tokens but never sign them: for rolling the secret. */
  @IsString()
  Jwt__PreviousSecretKeys = '';

  @IsString()
  @IsNotEmpty()
  Jwt__Issuer = DEFAULT_ISSUER;

  @IsString()
  @IsNotEmpty()
  Jwt__Audience = DEFAULT_AUDIENCE;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  Jwt__AccessTokenExpiryMinutes = 15;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  Jwt__RefreshTokenExpiryDays = 7;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(300)
  Jwt__ClockSkewSeconds = 0;

  /** Every protected route refuses an access token whose session (`sid`) has ended. */
  @IsBooleanKey()
  Jwt__RequireActiveSession = false;

  @IsString()
  @IsNotEmpty()
  ConnectionStrings__DefaultConnection = DEFAULT_CONNECTION_STRING;

  /** PostgreSQL only: connections per instance. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  Database__PoolSize = 10;

  /** How long a request waits for a database connection before it fails. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  Database__ConnectionTimeoutMs = 5_000;

  /** PostgreSQL: longest a statement may run; SQLite: longest a write waits for a lock. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  Database__StatementTimeoutMs = 5_000;

  /** SQLite only: the page cache of each process, in MiB. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(65_536)
  Database__SqliteCacheSizeMb = DEFAULT_SQLITE_CACHE_SIZE_MB;

  /** SQLite only: how much of the file is read through memory mapping, in MiB; 0 turns it off. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(MAX_SQLITE_MMAP_SIZE_MB)
  Database__SqliteMmapSizeMb = DEFAULT_SQLITE_MMAP_SIZE_MB;

  /** SQLite only: `full` (durable commits) or `normal`. Case and surrounding spaces are ignored. */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  )
  @IsIn(SQLITE_SYNCHRONOUS_MODES)
  Database__SqliteSynchronous: SqliteSynchronous = 'full';

  /**
   * PostgreSQL only: `on` keeps each account's state in the instance, invalidated through
   * LISTEN/NOTIFY (src/users/account-cache); `off` reads it on every protected request.
   */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  )
  @IsIn(ACCOUNT_CACHE_MODES)
  Database__AccountCache: AccountCacheMode = 'off';

  @Type(() => Number)
  @IsInt()
  @Min(1000)
  PasswordHashing__Iterations = OWASP_PBKDF2_SHA256_ITERATIONS;

  /** Hashes computed at once; unset, see defaultHashingConcurrency. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(64)
  PasswordHashing__Concurrency?: number;

  @IsBooleanKey()
  TokenCleanup__Enabled = true;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  TokenCleanup__IntervalSeconds = 3_600;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  TokenCleanup__BatchSize = 1_000;

  /** Expired tokens are kept this long, so a late replay still reads as reuse. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  TokenCleanup__RetentionDays = 7;

  /**
   * Audit rows younger than this are kept: the purge removes only older ones, and the database
   * refuses to delete a younger one.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(AUDIT_RETENTION_DAYS_LIMIT)
  Audit__RetentionDays = 365;

  /** Runs the audit purge on a timer. Off: rows are only removed by `audit:purge`. */
  @IsBooleanKey()
  Audit__PurgeEnabled = false;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  Audit__PurgeIntervalSeconds = 3_600;

  /** Rows deleted per statement: each batch is one short write. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  Audit__PurgeBatchSize = 250;

  /** Pause between two batches of the purge, so requests' writes get their turns. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(60_000)
  Audit__PurgePauseMs = 50;

  /** Longest a client may take to send one whole request, headers and body; then 408. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(600)
  Http__RequestTimeoutSeconds = 30;

  /** Active sessions one account may hold; a login past it ends the least recently used. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  Sessions__MaxActivePerUser = 100;

  /** Comma-separated addresses or CIDR ranges of proxies whose X-Forwarded-For is believed. */
  @IsString()
  TrustedProxies = '';

  /** Comma-separated origins of the web front ends that may call the API from a browser. */
  @IsString()
  Cors__AllowedOrigins = '';

  /** Strict-Transport-Security, for deployments that terminate TLS in front of Keygate. */
  @IsBooleanKey()
  Hsts__Enabled = false;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(HSTS_MAX_AGE_LIMIT_SECONDS)
  Hsts__MaxAgeSeconds = HSTS_DEFAULT_MAX_AGE_SECONDS;

  @IsBooleanKey()
  Hsts__IncludeSubDomains = false;

  /** The management listener (Prometheus metrics): off switch, port and interface. */
  @IsBooleanKey()
  Management__Enabled = true;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  Management__Port = DEFAULT_MANAGEMENT_PORT;

  /** Loopback by default: metrics are for the scraper, never for the public. */
  @IsString()
  @IsNotEmpty()
  Management__Host = '127.0.0.1';

  /** Least severe level written. Case and surrounding spaces are ignored. */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  )
  @IsIn(LOGGING_LEVELS)
  Logging__Level: LoggingLevel = 'info';

  /** Refuses login and refresh to accounts whose e-mail is not verified. Off: the interface. */
  @Transform(({ value }: { value: unknown }) => parseBoolean(value))
  @IsBoolean()
  Auth__RequireVerifiedEmail = false;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(24 * 60)
  Auth__PasswordResetTokenMinutes = 30;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(30 * 24)
  Auth__EmailVerificationTokenHours = 48;

  /** The name authenticator apps show beside a TOTP factor (the `issuer` of its otpauth URI). */
  @IsString()
  @IsNotEmpty()
  Mfa__Issuer = 'Keygate';

  /**
   * Comma-separated base64 keys of 32 bytes that encrypt TOTP secrets at rest: the first encrypts,
   * all decrypt (for rolling the key). Empty: the second-factor routes answer 503.
   */
  @IsString()
  Mfa__EncryptionKeys = '';

  /** `smtp://` or `smtps://`, with credentials if the server needs them. Unset: no SMTP. */
  @IsOptional()
  @IsString()
  Smtp__Url?: string;

  /** The sender, `Name <address>` or a bare address. Required with Smtp__Url. */
  @IsOptional()
  @IsString()
  Smtp__From?: string;

  /** The front end's page for a password reset; `{token}` marks where the token goes. */
  @IsOptional()
  @IsString()
  Mail__ResetPasswordUrl?: string;

  /** The front end's page that confirms an e-mail address; `{token}` marks the token. */
  @IsOptional()
  @IsString()
  Mail__VerifyEmailUrl?: string;

  /** Files here replace the built-in mail templates of the same name; empty: built-in only. */
  @IsString()
  Mail__TemplateDirectory = '';

  /** Mails of one kind to one account are at least this far apart; requests inside are dropped. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(24 * 60 * 60)
  Mail__MinIntervalSeconds = 60;

  /** Delivery attempts of one mail before it is given up. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(50)
  Mail__MaxAttempts = 10;

  /** Longest one delivery attempt may take; a claim on a mail lasts twice this. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(600)
  Mail__SendTimeoutSeconds = 30;

  /** How often each instance looks for mail to send (it also looks at once after a request). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3600)
  Mail__PollIntervalSeconds = 5;

  /** How long sent and given-up mails stay in the outbox (they hold addresses). */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  Mail__RetentionDays = 7;

  /** How new access tokens are signed: `HS256` (the interface), `ES256`, `EdDSA` or `RS256`. */
  @IsIn(SIGNING_ALGORITHMS)
  Jwt__SigningAlgorithm: SigningAlgorithm = 'HS256';

  /**
   * Comma-separated base64 keys of 32 bytes that encrypt signing keys' private halves at rest:
   * the first encrypts, all decrypt. Required with an asymmetric Jwt__SigningAlgorithm.
   */
  @IsString()
  Keys__EncryptionKeys = '';

  /** How long resource servers may cache the JWKS (its Cache-Control max-age). */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(JWKS_MAX_AGE_LIMIT_SECONDS)
  Keys__JwksMaxAgeSeconds = 300;

  /** How often each instance reads the key set again, so a change reaches every instance. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3600)
  Keys__RefreshIntervalSeconds = 30;

  /** Days after which a new key is made and published automatically; 0: only keys:rotate. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(3650)
  Keys__RotationIntervalDays = 0;

  /**
   * Seconds during which the immediate predecessor of a session's newest refresh token, presented
   * again, answers the same pair again instead of reuse detection (a lost answer's retry); 0 off.
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(300)
  Jwt__RefreshRetryWindowSeconds = 0;

  /** Sign-in with a one-time code mailed to the address (`/api/auth/email-code/*`). Needs mail. */
  @IsBooleanKey()
  EmailCode__Enabled = false;

  /** The front end's page that a sign-in link opens and that submits its token; `{token}` marks it. */
  @IsOptional()
  @IsString()
  EmailCode__LinkUrl?: string;

  /** Digits of a mailed sign-in code. */
  @Type(() => Number)
  @IsInt()
  @Min(6)
  @Max(10)
  EmailCode__CodeLength = 6;

  /** Minutes a mailed code, and the link mailed with it, work. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(60)
  EmailCode__LifetimeMinutes = 10;

  /** Wrong tries one mailed code survives: the last one allowed ends it. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10)
  EmailCode__MaxAttempts = 5;

  /** Keys sealing webhook signing secrets at rest (AES-256-GCM): base64 of 32 bytes, comma-separated. */
  @IsString()
  Webhooks__EncryptionKeys = '';

  /** Lets webhooks go to private, loopback and link-local addresses (tests, private networks). */
  @IsBooleanKey()
  Webhooks__AllowPrivateDestinations = false;

  /** Delivery attempts of one webhook before it is dead (listed and replayed by the CLI). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  Webhooks__MaxAttempts = 15;

  /** The first retry's delay; each next one doubles, up to Webhooks__MaxRetryDelaySeconds. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3600)
  Webhooks__RetryDelaySeconds = 10;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(24 * 3600)
  Webhooks__MaxRetryDelaySeconds = 1800;

  /** Longest a connection to a receiver may take to open. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(60)
  Webhooks__ConnectTimeoutSeconds = 5;

  /** Longest one delivery may take in all, answer included; a claim lasts twice this. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(300)
  Webhooks__TimeoutSeconds = 15;

  /** How often each instance looks for webhooks to deliver (it also looks at once after an event). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3600)
  Webhooks__PollIntervalSeconds = 5;

  /** Days that delivered webhooks stay before they are deleted (dead ones stay until replayed). */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  Webhooks__RetentionDays = 7;

  /**
   * Deliveries pause while requests keep the event loop busy, so they never slow requests down
   * (decision 0050); false delivers at full speed whatever the load.
   */
  @IsBooleanKey()
  Webhooks__YieldToRequests = true;

  /**
   * The relying party id of passkeys: the domain they are bound to (`example.com`), the host of
   * every origin in Passkeys__Origins or a parent of it. Empty: passkeys are off.
   */
  @IsString()
  Passkeys__RpId = '';

  /** The name browsers and authenticators show beside a passkey. */
  @IsString()
  @IsNotEmpty()
  Passkeys__RpName = 'Keygate';

  /**
   * Comma-separated exact origins whose pages may create and use passkeys
   * (`https://app.example.com`); required with Passkeys__RpId.
   */
  @IsString()
  Passkeys__Origins = '';

  /**
   * Sign-in through other identity providers: a JSON array of providers (`id`, `name`, `type`
   * `oidc` or `github`, `issuer`, `clientId`, `clientSecret`, optional `scopes`, and for `github`
   * optional `authorizationUrl`, `tokenUrl`, `apiUrl`). Empty: off, and its routes do not exist.
   */
  @IsString()
  Federation__Providers = '';

  /** The origin people reach Keygate at; a provider's callback is `<it>/api/auth/federation/<id>/callback`. */
  @IsString()
  Federation__PublicUrl = '';

  /** Comma-separated exact front-end URLs a provider sign-in may return to. */
  @IsString()
  Federation__RedirectUrls = '';

  /** Lets issuers and endpoints be plain http on loopback (development and tests only). */
  @IsBooleanKey()
  Federation__AllowInsecureIssuers = false;

  /** Longest any one call to an identity provider may take (discovery, keys, token, profile). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(60)
  Federation__TimeoutSeconds = 10;

  /**
   * Longest an answer may take to go out once its first byte is sent, so a client that reads
   * slowly (or not at all) cannot hold its connection; then the connection is closed.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(600)
  Http__ResponseTimeoutSeconds = 30;

  /**
   * Where the admin API (`/api/admin/`) is served: `public`, beside the interface, or
   * `management`, on the management listener only (which must then be enabled).
   */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  )
  @IsIn(ADMIN_API_LISTENERS)
  AdminApi__Listener: AdminApiListener = 'public';

  /**
   * Keygate as an OpenID Connect provider (src/oauth-server, docs/operations/oauth-server.md): off by
   * default, and then nothing of it is served.
   */
  @IsBooleanKey()
  OAuthServer__Enabled = false;

  /** The provider's issuer: an origin without a path (`https:`, or `http:` on loopback only). */
  @IsString()
  OAuthServer__Issuer = '';

  /** Minutes an access token issued to an application works. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(60)
  OAuthServer__AccessTokenMinutes = 10;

  /** Days an application's refresh token works (each use rotates it). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(365)
  OAuthServer__RefreshTokenDays = 30;

  /** A team's own consent page (an absolute URL); empty: the built-in page. */
  @IsString()
  OAuthServer__ConsentUrl = '';

  /**
   * The APIs the provider issues access tokens for (RFC 8707): a JSON array of
   * `{ "uri", "name", "scopes": [...], "accessTokenMinutes" }`; checked in oauth-server-settings.ts.
   */
  @IsString()
  OAuthServer__Resources = '';

  /** Every authorization and token request must name a `resource` (RFC 8707). */
  @IsBooleanKey()
  OAuthServer__RequireResource = false;

  /**
   * Dynamic client registration (RFC 7591) at /oauth/register: `off`, `open` (anyone may
   * register) or `initial-access-token` (a token made by the CLI is required).
   */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  )
  @IsIn(DYNAMIC_REGISTRATION_MODES)
  OAuthServer__DynamicRegistration: DynamicRegistrationMode = 'off';

  /** An `https` URL may be a `client_id`: Keygate fetches its client metadata document. */
  @IsBooleanKey()
  OAuthServer__ClientIdMetadataDocuments = false;

  /**
   * The fetch of a client metadata document may reach private, loopback and link-local
   * addresses (tests, private networks).
   */
  @IsBooleanKey()
  OAuthServer__AllowPrivateFetch = false;
  /** The device authorization grant (RFC 8628) for command-line tools and devices without a browser. */
  @IsBooleanKey()
  OAuthServer__DeviceFlow = false;

  /** The client credentials grant for services: tokens for a declared resource only. */
  @IsBooleanKey()
  OAuthServer__ClientCredentials = false;
}

/** A key that holds a boolean, written `true`/`false` in any case or `1`/`0`. */
function IsBooleanKey(): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => parseBoolean(value)),
    IsBoolean(),
  );
}

/** `true`/`false` in any case, `1`/`0`; anything else is left for @IsBoolean to refuse. */
function parseBoolean(value: unknown): unknown {
  if (typeof value !== 'string') {
    return value;
  }
  const normalized = value.trim().toLowerCase();
  if (normalized === 'true' || normalized === '1') {
    return true;
  }
  if (normalized === 'false' || normalized === '0') {
    return false;
  }
  return value;
}
