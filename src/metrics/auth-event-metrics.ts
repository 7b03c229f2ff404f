import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { AuthEvent, LoginFailureReason, RefreshFailureReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { KeygateMetrics, type LoginOutcome, type RefreshOutcome } from './keygate-metrics.js';

/** An unknown e-mail and a wrong password are one outcome, as they are one answer (SPEC §4.2). */
const LOGIN_FAILURE_OUTCOME: Readonly<Record<LoginFailureReason, LoginOutcome>> = {
  unknown_email: 'bad_credentials',
  bad_password: 'bad_credentials',
  locked: 'locked',
  deactivated: 'deactivated',
  unverified: 'unverified',
  mfa_required: 'mfa_required',
  bad_mfa_code: 'bad_mfa_code',
};

const REFRESH_FAILURE_OUTCOME: Readonly<Record<RefreshFailureReason, RefreshOutcome>> = {
  invalid: 'invalid',
  expired: 'expired',
  deactivated: 'deactivated',
  unverified: 'unverified',
};

/** Counts what the services tell happened; it reads the events, never the services. */
@Injectable()
export class AuthEventMetrics implements OnModuleInit {
  constructor(
    private readonly events: AuthEvents,
    private readonly metrics: KeygateMetrics,
  ) {}

  onModuleInit(): void {
    if (this.metrics.enabled) {
      this.events.subscribe(({ event }) => this.record(event));
    }
  }

  record(event: AuthEvent): void {
    const m = this.metrics;
    switch (event.type) {
      case 'registered':
        m.registrations.inc();
        return;
      case 'login_succeeded':
        m.logins.inc({ outcome: 'success' });
        return;
      case 'login_failed':
        m.logins.inc({ outcome: LOGIN_FAILURE_OUTCOME[event.reason] });
        return;
      case 'lockout_started':
        m.lockouts.inc();
        return;
      case 'token_refreshed':
        m.refreshes.inc({ outcome: 'rotated' });
        return;
      case 'refresh_retried':
        m.refreshes.inc({ outcome: 'retried' });
        return;
      case 'refresh_failed':
        m.refreshes.inc({ outcome: REFRESH_FAILURE_OUTCOME[event.reason] });
        return;
      case 'reuse_detected':
        m.refreshes.inc({ outcome: 'reuse_detected' });
        m.descendantsRevoked.inc({ cause: 'reuse_detected' }, event.sessionEnded ? 1 : 0);
        return;
      case 'token_revoked': {
        m.revocations.inc();
        // A rotated token's logout ends the session its descendant carries on.
        m.descendantsRevoked.inc(
          { cause: 'revoke' },
          event.sessionEnded && event.wasRotated ? 1 : 0,
        );
        return;
      }
      case 'sessions_revoked':
        m.allSessionsRevocations.inc();
        return;
      case 'mail_sent':
        m.mailsSent.inc({ kind: event.kind });
        return;
      case 'mail_failed':
        m.mailsFailed.inc({ kind: event.kind });
        return;
      case 'mail_retry_scheduled':
        m.mailRetries.inc({ kind: event.kind });
        return;
      case 'password_changed':
      case 'password_reset':
      case 'email_verified':
      case 'email_changed':
      case 'account_deleted':
        m.accountChanges.inc({ change: event.type });
        return;
      case 'password_confirmation_failed':
      case 'password_reset_requested':
      case 'password_reset_failed':
      case 'email_verification_requested':
      case 'email_change_requested':
      case 'email_verification_failed':
      case 'totp_enrollment_started':
      case 'totp_enabled':
      case 'totp_recovery_codes_replaced':
      case 'totp_disabled':
      case 'totp_recovery_code_used':
      case 'totp_code_failed':
        // The audit trail records these; their counts would say little an operator acts on.
        return;
      case 'admin_user_deleted':
      case 'admin_user_deactivated':
      case 'admin_user_activated':
      case 'admin_user_unlocked':
      case 'admin_sessions_revoked':
      case 'admin_tokens_purged':
      case 'admin_audit_viewed':
      case 'admin_totp_reset':
      case 'admin_audit_exported':
      case 'admin_audit_purged':
      case 'admin_webhook_added':
      case 'admin_webhook_removed':
      case 'admin_webhook_replayed':
      case 'admin_key_created':
      case 'admin_key_revoked':
        // Admin actions run in the CLI's own short-lived process, which no one scrapes: the
        // audit trail is their record.
        return;
      case 'admin_email_verified':
      case 'admin_password_reset_mail_requested':
      case 'admin_session_ended':
      case 'admin_audit_export_started':
        // The admin API's calls are counted by route and outcome (keygate_admin_api_requests_total).
        return;
      case 'audit_purged':
        // Hourly at most, and only when rows went: the trail and the log line say enough.
        return;
      case 'signing_key_created':
      case 'signing_key_activated':
      case 'signing_key_retired':
        // Rare, mostly from the CLI's process: the trail records them, the key's age is a gauge.
        return;
      case 'email_code_requested':
        m.emailCodesIssued.inc();
        return;
      case 'email_code_login_succeeded':
        m.emailCodeLogins.inc({ outcome: 'success' });
        return;
      case 'email_code_login_failed':
        // The failure reasons are the outcomes, one for one.
        m.emailCodeLogins.inc({ outcome: event.reason });
        return;
      case 'federation_login_succeeded':
        m.federationLogins.inc({ provider: event.provider, outcome: 'success' });
        return;
      case 'federation_signed_up':
        m.federationLogins.inc({ provider: event.provider, outcome: 'signed_up' });
        return;
      case 'federation_account_reclaimed':
        m.federationLogins.inc({ provider: event.provider, outcome: 'reclaimed' });
        return;
      case 'federation_identity_linked':
        m.federationLogins.inc({ provider: event.provider, outcome: 'linked' });
        return;
      case 'federation_login_failed':
      case 'federation_link_refused':
        m.federationLogins.inc({ provider: event.provider, outcome: event.reason });
        return;
      case 'federation_identity_unlinked':
        // The audit trail records it; a count would say nothing an operator acts on.
        return;
      case 'passkey_registered':
        m.passkeyCeremonies.inc({ ceremony: 'registration', outcome: 'success' });
        return;
      case 'passkey_login_succeeded':
        m.passkeyCeremonies.inc({ ceremony: 'login', outcome: 'success' });
        return;
      case 'passkey_ceremony_failed':
        m.passkeyCeremonies.inc({ ceremony: event.ceremony, outcome: event.reason });
        return;
      case 'passkey_removed':
        m.passkeysRemoved.inc();
        return;
      case 'passkey_renamed':
        // The audit trail records it; a count would say nothing an operator acts on.
        return;
      case 'oauth_token_issued':
        m.oauthTokensIssued.inc({ client_id: event.clientId, grant_type: event.grantType });
        return;
      case 'oauth_refresh_reuse_detected':
        m.oauthRefreshReuse.inc({ client_id: event.clientId });
        return;
      case 'oauth_consent_granted':
        m.oauthConsents.inc({ change: 'granted' });
        return;
      case 'oauth_consent_withdrawn':
        m.oauthConsents.inc({ change: 'withdrawn' });
        return;
      case 'oauth_client_added':
      case 'oauth_client_removed':
        // Rare operator changes, often from the CLI's own process: the audit trail records them.
        return;
      case 'admin_passkeys_removed':
        // The CLI's own process, which no one scrapes (as the other admin actions).
        return;
    }
  }
}
