import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AppConfig } from '../config/app-config.js';
import { MAIL_KINDS } from '../mail/entities/outbox-mail.entity.js';

export const LOGIN_OUTCOMES = [
  'success',
  'bad_credentials',
  'locked',
  'deactivated',
  'unverified',
  'mfa_required',
  'bad_mfa_code',
] as const;
export type LoginOutcome = (typeof LOGIN_OUTCOMES)[number];

export const REFRESH_OUTCOMES = [
  'rotated',
  'reuse_detected',
  'expired',
  'invalid',
  'deactivated',
  'unverified',
  'retried',
] as const;
export type RefreshOutcome = (typeof REFRESH_OUTCOMES)[number];

/** What revoked a descendant: a replay of a revoked token, or a revoke of a rotated one. */
export const DESCENDANT_REVOCATION_CAUSES = ['reuse_detected', 'revoke'] as const;

/** Account changes made through the account routes. */
export const ACCOUNT_CHANGES = [
  'password_changed',
  'password_reset',
  'email_verified',
  'email_changed',
  'account_deleted',
] as const;
export type AccountChange = (typeof ACCOUNT_CHANGES)[number];

export const PASSWORD_HASH_OPERATIONS = ['hash', 'verify'] as const;

/** How sign-ins with a mailed code ended: `success`, or why they were refused. */
export const EMAIL_CODE_LOGIN_OUTCOMES = [
  'success',
  'invalid',
  'expired',
  'bad_code',
  'exhausted',
  'deactivated',
  'locked',
  'mfa_required',
  'bad_mfa_code',
] as const;
export type EmailCodeLoginOutcome = (typeof EMAIL_CODE_LOGIN_OUTCOMES)[number];
/** What one webhook delivery attempt came to. */
export const WEBHOOK_OUTCOMES = ['delivered', 'retried', 'dead'] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];
/** The passkey ceremonies, as keygate_passkey_ceremonies_total labels them. */
export const PASSKEY_CEREMONIES = ['registration', 'login', 'second_factor', 'proof'] as const;
/** A ceremony's outcome: success, or why it was refused (PasskeyFailureReason). */
export const PASSKEY_OUTCOMES = [
  'success',
  'bad_challenge',
  'bad_response',
  'unknown_credential',
  'other_account',
  'counter_regressed',
  'already_registered',
  'too_many',
  'deactivated',
  'unverified',
] as const;

/** Finer around 0.1–0.3 s, where PBKDF2 at the OWASP cost lands on a server core. */
const PASSWORD_HASH_BUCKETS = [0.01, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 2.5, 5];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

let processRegistry: Registry | undefined;

/**
 * prom-client's default metrics (process_*, nodejs_*) in a registry made once per process, like
 * what they measure: their event-loop monitor and GC observer cannot be stopped, so one set per
 * app would pile up in a test process that boots many apps. Their standard names are kept,
 * unprefixed, so stock dashboards work.
 */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * Every metric the service exports, in a registry of its own rather than prom-client's global
 * one, so several apps in one process (tests) never share or re-register a metric. Labels hold
 * only fixed vocabularies, route patterns, methods and status codes: never a user id, an e-mail
 * or a token.
 */
@Injectable()
export class KeygateMetrics {
  /** False when Management__Enabled is off: the collectors then record nothing. */
  readonly enabled: boolean;
  /** This app's own metrics. */
  readonly registry = new Registry();
  /** What a scrape reads: this app's metrics and, when enabled, the process's. */
  readonly scraped: Registry;

  readonly registrations = new Counter({
    name: 'keygate_registrations_total',
    help: 'Accounts registered.',
    registers: [this.registry],
  });

  readonly logins = new Counter<'outcome'>({
    name: 'keygate_logins_total',
    help: 'Login attempts by outcome: success, bad_credentials (unknown e-mail or wrong password), locked, deactivated.',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly lockouts = new Counter({
    name: 'keygate_lockouts_total',
    help: 'Lockouts started by repeated wrong passwords.',
    registers: [this.registry],
  });

  readonly refreshes = new Counter<'outcome'>({
    name: 'keygate_refreshes_total',
    help: 'Refresh attempts by outcome: rotated, reuse_detected, expired, invalid, deactivated (the owner is deactivated), retried (the same pair answered again within Jwt__RefreshRetryWindowSeconds).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly descendantsRevoked = new Counter<'cause'>({
    name: 'keygate_descendant_tokens_revoked_total',
    help: 'Refresh tokens revoked because a token they descend from was replayed (reuse_detected) or revoked after its rotation (revoke).',
    labelNames: ['cause'],
    registers: [this.registry],
  });

  readonly revocations = new Counter({
    name: 'keygate_revocations_total',
    help: 'Refresh tokens revoked on request (successful POST /api/auth/revoke).',
    registers: [this.registry],
  });

  readonly allSessionsRevocations = new Counter({
    name: 'keygate_all_sessions_revocations_total',
    help: "Requests that ended every session of a user, or every one but the caller's.",
    registers: [this.registry],
  });

  readonly mailsSent = new Counter<'kind'>({
    name: 'keygate_mails_sent_total',
    help: 'Mails accepted by the SMTP server (or written to a file in development), by kind.',
    labelNames: ['kind'],
    registers: [this.registry],
  });

  readonly mailsFailed = new Counter<'kind'>({
    name: 'keygate_mails_failed_total',
    help: 'Mails given up, by kind: refused for good by the server, or out of attempts.',
    labelNames: ['kind'],
    registers: [this.registry],
  });

  readonly mailRetries = new Counter<'kind'>({
    name: 'keygate_mail_retries_total',
    help: 'Delivery attempts that failed and were scheduled again, by kind.',
    labelNames: ['kind'],
    registers: [this.registry],
  });

  readonly accountChanges = new Counter<'change'>({
    name: 'keygate_account_changes_total',
    help: 'Changes made through the account routes: password_changed, password_reset, email_verified, email_changed, account_deleted.',
    labelNames: ['change'],
    registers: [this.registry],
  });

  readonly httpRequestDuration = new Histogram<'method' | 'route' | 'status_code'>({
    name: 'keygate_http_request_duration_seconds',
    help: 'Time to answer a request on the public port, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });

  readonly emailCodesIssued = new Counter({
    name: 'keygate_email_codes_issued_total',
    help: 'Sign-in codes written for an account and queued to its address (not requests for other addresses).',
    registers: [this.registry],
  });

  readonly emailCodeLogins = new Counter<'outcome'>({
    name: 'keygate_email_code_logins_total',
    help: 'Sign-ins with a mailed code, by outcome: success, or why they were refused.',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly federationLogins = new Counter<'provider' | 'outcome'>({
    name: 'keygate_federation_logins_total',
    help: 'Sign-ins through other identity providers, by provider id and outcome: success, signed_up, reclaimed, linked, or why they were refused.',
    labelNames: ['provider', 'outcome'],
    registers: [this.registry],
  });

  readonly oauthTokensIssued = new Counter<'client_id' | 'grant_type'>({
    name: 'keygate_oauth_tokens_issued_total',
    help: 'Tokens the OpenID provider issued at its token endpoint, by client id and grant type (authorization_code, refresh_token).',
    labelNames: ['client_id', 'grant_type'],
    registers: [this.registry],
  });

  readonly oauthRefreshReuse = new Counter<'client_id'>({
    name: 'keygate_oauth_refresh_reuse_total',
    help: 'Rotated refresh tokens of the OpenID provider presented again (each revoked its grant), by client id.',
    labelNames: ['client_id'],
    registers: [this.registry],
  });

  readonly oauthConsents = new Counter<'change'>({
    name: 'keygate_oauth_consents_total',
    help: "Consents given to applications on the OpenID provider's consent page (granted) and withdrawn by their owner (withdrawn).",
    labelNames: ['change'],
    registers: [this.registry],
  });

  readonly passwordHashDuration = new Histogram<'operation'>({
    name: 'keygate_password_hash_duration_seconds',
    help: 'Time of one PBKDF2 derivation: hash (registration, rehash) or verify (login).',
    labelNames: ['operation'],
    buckets: PASSWORD_HASH_BUCKETS,
    registers: [this.registry],
  });

  /** The key that signs access tokens, its algorithm and age in seconds; null while the HS256 secret signs. */
  signingKey: () => { readonly algorithm: string; readonly ageSeconds: number } | null = () => null;

  readonly signingKeyAge = new Gauge<'algorithm'>({
    name: 'keygate_signing_key_age_seconds',
    help: 'Age in seconds of the key that signs access tokens (since it was made or imported), by algorithm; no sample while the HS256 secret signs.',
    labelNames: ['algorithm'],
    registers: [this.registry],
    // Read at scrape time (SigningKeyMetrics sets the source): a rotation shows at once.
    collect: () => {
      this.signingKeyAge.reset();
      const key = this.signingKey();
      if (key !== null) {
        this.signingKeyAge.set({ algorithm: key.algorithm }, key.ageSeconds);
      }
    },
  });

  readonly webhookDeliveries = new Counter<'outcome'>({
    name: 'keygate_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome: delivered (2xx), retried (scheduled again), dead (out of attempts, or a destination refused).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly webhookQueueAge = new Gauge({
    name: 'keygate_webhook_queue_age_seconds',
    help: "Age of the oldest queued or pending webhook delivery (0 when none), as of this instance's last delivery round.",
    registers: [this.registry],
  });

  readonly passkeyCeremonies = new Counter<'ceremony' | 'outcome'>({
    name: 'keygate_passkey_ceremonies_total',
    help: 'Passkey ceremonies by kind (registration, login, second_factor, proof) and outcome: success, or why it was refused (counter_regressed: a cloned authenticator).',
    labelNames: ['ceremony', 'outcome'],
    registers: [this.registry],
  });

  readonly passkeysRemoved = new Counter({
    name: 'keygate_passkeys_removed_total',
    help: 'Passkeys removed by their owner (DELETE /api/auth/passkeys/{id}).',
    registers: [this.registry],
  });

  /** Every call of the admin API (src/admin/http), by route pattern and outcome. */
  readonly adminApiRequests = new Counter<'route' | 'outcome'>({
    name: 'keygate_admin_api_requests_total',
    help: 'Calls of the admin API by route pattern and outcome: ok, bad_request, unauthorized, forbidden, not_found, conflict, unavailable, error.',
    labelNames: ['route', 'outcome'],
    registers: [this.registry],
  });

  constructor(config: AppConfig) {
    this.enabled = config.management.enabled;
    if (!this.enabled) {
      this.scraped = this.registry;
      return;
    }
    this.scraped = Registry.merge([processMetrics(), this.registry]);
    // Every known series starts at 0, so a rate() sees its first increment.
    LOGIN_OUTCOMES.forEach((outcome) => this.logins.inc({ outcome }, 0));
    REFRESH_OUTCOMES.forEach((outcome) => this.refreshes.inc({ outcome }, 0));
    DESCENDANT_REVOCATION_CAUSES.forEach((cause) => this.descendantsRevoked.inc({ cause }, 0));
    for (const kind of MAIL_KINDS) {
      this.mailsSent.inc({ kind }, 0);
      this.mailsFailed.inc({ kind }, 0);
      this.mailRetries.inc({ kind }, 0);
    }
    ACCOUNT_CHANGES.forEach((change) => this.accountChanges.inc({ change }, 0));
    PASSWORD_HASH_OPERATIONS.forEach((operation) => this.passwordHashDuration.zero({ operation }));
    EMAIL_CODE_LOGIN_OUTCOMES.forEach((outcome) => this.emailCodeLogins.inc({ outcome }, 0));
    this.emailCodesIssued.inc(0);
    WEBHOOK_OUTCOMES.forEach((outcome) => this.webhookDeliveries.inc({ outcome }, 0));
    for (const ceremony of PASSKEY_CEREMONIES) {
      PASSKEY_OUTCOMES.forEach((outcome) => this.passkeyCeremonies.inc({ ceremony, outcome }, 0));
    }
  }
}
