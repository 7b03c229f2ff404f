import type { RequestOrigin } from '../common/request-origin/request-origin.js';

/** Why a login was refused. `unknown_email` and `bad_password` both answer "bad credentials". */
export type LoginFailureReason =
  | 'unknown_email'
  | 'bad_password'
  | 'locked'
  | 'deactivated'
  /** The password was right, but Auth__RequireVerifiedEmail refuses an unverified address. */
  | 'unverified'
  /** The password was right, but the account has a second factor and no code was given. */
  | 'mfa_required'
  /** The password was right, the second factor's code wrong or used before; counts as a failure. */
  | 'bad_mfa_code';

/** Why a refresh was refused, reuse aside: that one is its own event. */
export type RefreshFailureReason = 'invalid' | 'expired' | 'deactivated' | 'unverified';

/** The routes that ask for the password again before they act. */
export type PasswordConfirmationAction =
  | 'password_change'
  | 'email_change'
  | 'account_deletion'
  | 'totp_enrollment'
  | 'totp_disable'
  | 'passkey_registration'
  | 'federation_link';

/** The second-factor routes that ask for a code. */
export type TotpCodeAction = 'totp_confirmation' | 'recovery_codes' | 'totp_disable';

/** Why the code of such a route was refused; a wrong one counts toward the lockout, but at confirmation. */
export type TotpCodeFailureReason = 'bad_code' | 'locked' | 'deactivated';

/** Why the password of such a route was refused; a wrong one counts toward the lockout. */
export type PasswordConfirmationFailureReason = 'bad_password' | 'locked' | 'deactivated';

/**
 * The passkey ceremonies: a new passkey, a sign-in with one alone, one as the login's second
 * factor, one as the proof that registering another asks for.
 */
export type PasskeyCeremonyKind = 'registration' | 'login' | 'second_factor' | 'proof';

/** Why a passkey ceremony was refused. */
export type PasskeyFailureReason =
  /** No such challenge: unknown, used, expired, or made for another ceremony or account. */
  | 'bad_challenge'
  /** The response failed verification: origin, relying party, signature, flags, or its shape. */
  | 'bad_response'
  /** No stored passkey has the credential id (never registered, or deleted). */
  | 'unknown_credential'
  /** The passkey belongs to another account than the one the ceremony is for. */
  | 'other_account'
  /** The signature counter did not move forward: a cloned authenticator. */
  | 'counter_regressed'
  | 'already_registered'
  | 'too_many'
  | 'deactivated'
  | 'unverified';

/** Why a mailed token was refused: unknown and used ones are one case, as they are one answer. */
export type MailedTokenFailureReason = 'invalid' | 'expired';

/**
 * Who acted through the admin API: its key, by id and name (never the secret), and the reason the
 * operator gave. Absent on the admin CLI's events, which the OS account in the user agent names.
 */
export interface AdminApiActor {
  readonly adminKeyId: string;
  readonly adminKeyName: string;
  readonly reason: string | null;
}

/**
 * What happened to an account or a session, told once by the service that decided it, after the
 * change committed. Metrics and the audit trail listen; neither can change an answer.
 * Never carries a secret: no password, no token value, no token hash.
 */
export type AuthEvent =
  | { readonly type: 'registered'; readonly userId: string; readonly familyId: string }
  | { readonly type: 'login_succeeded'; readonly userId: string; readonly familyId: string }
  | {
      readonly type: 'login_failed';
      /** Null when no account has the e-mail. */
      readonly userId: string | null;
      readonly email: string;
      readonly reason: LoginFailureReason;
    }
  | {
      readonly type: 'lockout_started';
      readonly userId: string;
      readonly failedAttempts: number;
      readonly lockedUntil: Date;
    }
  | {
      readonly type: 'token_refreshed';
      readonly userId: string;
      readonly familyId: string;
      /**
       * The presented token's generation in its session (tokens are named by session and
       * generation): it is now revoked, and generation + 1 was issued in its place.
       */
      readonly generation: number;
    }
  | {
      readonly type: 'refresh_failed';
      readonly userId: string | null;
      readonly reason: RefreshFailureReason;
    }
  | {
      readonly type: 'reuse_detected';
      readonly userId: string;
      readonly familyId: string;
      /** The generation of the revoked token that was presented again. */
      readonly generation: number;
      /** Whether this detection ended the session (false: it had already ended). */
      readonly sessionEnded: boolean;
    }
  | {
      readonly type: 'token_revoked';
      readonly userId: string;
      readonly familyId: string;
      /** The generation of the token presented. */
      readonly generation: number;
      /**
       * Whether this call ended the session (false: it had already ended). A logout ends the
       * session whichever of its tokens it names, so a rotated token logs out its successor too.
       */
      readonly sessionEnded: boolean;
      /** The token presented had been rotated: a later generation carried its session on. */
      readonly wasRotated: boolean;
    }
  | {
      readonly type: 'password_confirmation_failed';
      readonly userId: string;
      readonly action: PasswordConfirmationAction;
      readonly reason: PasswordConfirmationFailureReason;
    }
  | {
      readonly type: 'password_changed';
      readonly userId: string;
      /** The caller's session, which stays; null when its access token names none. */
      readonly keptFamilyId: string | null;
      /** The sessions this change ended. */
      readonly endedSessionIds: readonly string[];
    }
  /** A reset link was queued for an account (requests for unknown addresses leave no trace). */
  | { readonly type: 'password_reset_requested'; readonly userId: string }
  | {
      readonly type: 'password_reset';
      readonly userId: string;
      /** The sessions this change ended. */
      readonly endedSessionIds: readonly string[];
    }
  | {
      readonly type: 'password_reset_failed' | 'email_verification_failed';
      /** Null when the token is unknown (or was used). */
      readonly userId: string | null;
      readonly reason: MailedTokenFailureReason;
    }
  | {
      readonly type: 'email_verification_requested' | 'email_change_requested';
      readonly userId: string;
    }
  | { readonly type: 'email_verified' | 'email_changed'; readonly userId: string }
  | { readonly type: 'account_deleted'; readonly userId: string }
  // The TOTP second factor. No secret, code or digest is ever part of an event.
  | { readonly type: 'totp_enrollment_started'; readonly userId: string }
  | {
      readonly type: 'totp_enabled';
      readonly userId: string;
      /** The caller's session, which stays; null when its access token names none. */
      readonly keptFamilyId: string | null;
      /** The sessions this change ended. */
      readonly endedSessionIds: readonly string[];
    }
  | {
      readonly type: 'totp_recovery_codes_replaced' | 'totp_disabled' | 'totp_recovery_code_used';
      readonly userId: string;
    }
  | {
      readonly type: 'totp_code_failed';
      readonly userId: string;
      readonly action: TotpCodeAction;
      readonly reason: TotpCodeFailureReason;
    }
  // The mail sender's work, off any request: no addresses, only the outbox row and its kind.
  | {
      readonly type: 'mail_sent' | 'mail_retry_scheduled' | 'mail_failed';
      readonly userId: string | null;
      readonly mailId: string;
      readonly kind: string;
      /** Attempts so far, this one included. */
      readonly attempts: number;
      /** Why the attempt failed: an error code and an SMTP status; null when sent. */
      readonly error: string | null;
    }
  | {
      readonly type: 'sessions_revoked';
      readonly userId: string;
      /** The session left alone, when the caller asked to keep its own. */
      readonly keepFamilyId: string | null;
      /** The sessions this change ended. */
      readonly endedSessionIds: readonly string[];
    }
  // What an operator did through the admin CLI; services emit these after the change committed.
  | {
      readonly type: 'admin_user_deactivated' | 'admin_user_activated';
      readonly userId: string;
      readonly actor?: AdminApiActor;
      /** False when the account already was in the state asked for. */
      readonly changed: boolean;
    }
  | {
      readonly type: 'admin_user_unlocked';
      readonly userId: string;
      readonly actor?: AdminApiActor;
      /** The failed-attempt counter and lockout end that were cleared. */
      readonly failedAttempts: number;
      readonly lockedUntil: Date | null;
    }
  | {
      readonly type: 'admin_sessions_revoked';
      readonly userId: string;
      readonly actor?: AdminApiActor;
      readonly revokedTokenCount: number;
    }
  | { readonly type: 'admin_tokens_purged'; readonly userId: null; readonly deletedCount: number }
  | { readonly type: 'admin_user_deleted'; readonly userId: string; readonly actor?: AdminApiActor }
  | {
      readonly type: 'admin_totp_reset';
      readonly userId: string;
      readonly actor?: AdminApiActor;
      /** False when the account had no factor, pending or confirmed. */
      readonly changed: boolean;
    }
  | {
      readonly type: 'admin_audit_viewed';
      readonly userId: string;
      /** How many rows were shown. */
      readonly rowCount: number;
    }
  | {
      readonly type: 'admin_audit_exported';
      readonly userId: null;
      /** Rows before this instant were exported. */
      readonly before: Date;
      readonly rowCount: number;
    }
  // The audit purge: `admin_audit_purged` from the CLI, `audit_purged` from the timer.
  | {
      readonly type: 'admin_audit_purged' | 'audit_purged';
      readonly userId: null;
      /** Rows older than this instant were removed. */
      readonly cutoff: Date;
      readonly retentionDays: number;
      readonly deletedCount: number;
    }
  // The key set (src/keys): keys named by their public `kid`, never any key material.
  | {
      readonly type: 'signing_key_created';
      readonly userId: null;
      readonly kid: string;
      readonly algorithm: string;
      /** Made by Keygate, or imported from PEM. */
      readonly source: 'generated' | 'imported';
      /** What made it: an operator's rotation or import, the timer, or a set without a current key. */
      readonly reason: SigningKeyCreationReason;
      /** When it starts signing. */
      readonly activatesAt: Date;
      /** The admin API key that rotated it; absent for the CLI and the timer. */
      readonly actor?: AdminApiActor;
    }
  | {
      readonly type: 'signing_key_activated';
      readonly userId: null;
      readonly kid: string;
      readonly algorithm: string;
      /** The activation it had, moved to now because the set had no current key. */
      readonly scheduledFor: Date;
    }
  | {
      readonly type: 'signing_key_retired';
      readonly userId: null;
      readonly kid: string;
      /** HS256 for a secret of Jwt__SecretKey or Jwt__PreviousSecretKeys. */
      readonly algorithm: string;
      /** The state it was in: its tokens stop verifying now. */
      readonly previousState: 'next' | 'current' | 'previous' | 'retired';
      /** The admin API key that retired it; absent for the CLI. */
      readonly actor?: AdminApiActor;
    }
  | {
      /**
       * Jwt__RefreshRetryWindowSeconds: a rotated token presented again within the window, while
       * it was its session's newest token's immediate predecessor, got that same pair again
       * (nothing was rotated or written but this event).
       */
      readonly type: 'refresh_retried';
      readonly userId: string;
      readonly familyId: string;
      /** The generation of the token presented again; generation + 1 was answered again. */
      readonly generation: number;
    }
  // Sign-in with a mailed code (src/email-codes). No code, token or digest is ever part of one.
  /** A code was mailed to an account (requests for other addresses leave no trace). */
  | { readonly type: 'email_code_requested'; readonly userId: string }
  | {
      readonly type: 'email_code_login_succeeded';
      readonly userId: string;
      readonly familyId: string;
    }
  | {
      readonly type: 'email_code_login_failed';
      /** Null when no account has the address, or the link's token is unknown. */
      readonly userId: string | null;
      readonly reason: EmailCodeFailureReason;
    }
  // Sign-in through other identity providers (src/federation): the provider by its configured
  // id; never a provider token, code, state or one-time code.
  /** A first sign-in through a provider made a new account. */
  | {
      readonly type: 'federation_signed_up';
      readonly userId: string;
      readonly provider: string;
      readonly identityId: string;
    }
  /** An identity was linked: by its owner while signed in, or by a first sign-in (`sign_in`). */
  | {
      readonly type: 'federation_identity_linked';
      readonly userId: string;
      readonly provider: string;
      readonly identityId: string;
      readonly via: 'sign_in' | 'link';
    }
  /**
   * A provider proved the address of an account whose address was never verified: everything
   * set up on the account before (password, passkeys, second factor, identities, sessions,
   * pending links) was removed and the account went to the provider's person.
   */
  | {
      readonly type: 'federation_account_reclaimed';
      readonly userId: string;
      readonly provider: string;
      readonly identityId: string;
      readonly removedPasskeys: number;
      readonly removedIdentities: number;
      readonly endedSessionIds: readonly string[];
    }
  | {
      readonly type: 'federation_login_succeeded';
      readonly userId: string;
      readonly familyId: string;
      readonly provider: string;
    }
  | {
      readonly type: 'federation_login_failed';
      /** Null when no account is known. */
      readonly userId: string | null;
      readonly provider: string;
      readonly reason: FederationFailureReason;
    }
  | {
      readonly type: 'federation_link_refused';
      readonly userId: string;
      readonly provider: string;
      readonly reason: FederationFailureReason;
    }
  | {
      readonly type: 'federation_identity_unlinked';
      readonly userId: string;
      readonly provider: string;
      readonly identityId: string;
      /** The admin API key that removed it; absent for its owner and for the CLI. */
      readonly actor?: AdminApiActor;
    }
  // Keygate as an OpenID provider (src/oauth-server): the client by its id; never a code, a
  // token, a secret or a digest of one.
  /**
   * An operator registered or removed an application (CLI or admin API), or an application
   * registered itself (dynamic client registration: `selfRegistered`).
   */
  | {
      readonly type: 'oauth_client_added' | 'oauth_client_removed';
      readonly userId: null;
      readonly clientId: string;
      /** The admin API key that made the change; absent for the CLI. */
      readonly actor?: AdminApiActor;
      /** True when the client registered itself at /oauth/register; absent otherwise. */
      readonly selfRegistered?: true;
    }
  /** The person approved the scopes an application asked for on the consent page. */
  | {
      readonly type: 'oauth_consent_granted';
      readonly userId: string;
      readonly clientId: string;
      /** The scopes approved this time (those the grant did not cover yet). */
      readonly scopes: readonly string[];
    }
  /** The person withdrew an application's consent, which ended its tokens. */
  | {
      readonly type: 'oauth_consent_withdrawn';
      readonly userId: string;
      readonly clientId: string;
      /** The scopes the withdrawn grants covered. */
      readonly scopes: readonly string[];
    }
  /** The token endpoint issued tokens: `authorization_code` or `refresh_token`. */
  | {
      readonly type: 'oauth_token_issued';
      readonly userId: string;
      readonly clientId: string;
      readonly grantType: string;
      readonly hasRefreshToken: boolean;
    }
  /** A rotated refresh token came back: the whole grant was revoked. */
  | {
      readonly type: 'oauth_refresh_reuse_detected';
      readonly userId: string;
      readonly clientId: string;
    }
  // Webhook subscriptions changed through the admin CLI (src/webhooks); never the secret.
  | {
      readonly type: 'admin_webhook_added' | 'admin_webhook_removed';
      readonly userId: null;
      readonly subscriptionId: string;
      /** The admin API key that made the change; absent for the CLI. */
      readonly actor?: AdminApiActor;
    }
  | {
      readonly type: 'admin_webhook_replayed';
      readonly userId: null;
      /** The dead delivery replayed, or null for all of them. */
      readonly deliveryId: string | null;
      readonly replayedCount: number;
      /** The admin API key that replayed; absent for the CLI. */
      readonly actor?: AdminApiActor;
    }
  // Passkeys (WebAuthn). No challenge, credential id, key or signature is ever part of an event.
  | {
      readonly type: 'passkey_registered' | 'passkey_renamed' | 'passkey_removed';
      readonly userId: string;
      readonly passkeyId: string;
    }
  | {
      readonly type: 'passkey_login_succeeded';
      readonly userId: string;
      readonly familyId: string;
      readonly passkeyId: string;
    }
  | {
      readonly type: 'passkey_ceremony_failed';
      /** Null when no account is known: an unknown credential, a challenge of no account. */
      readonly userId: string | null;
      readonly ceremony: PasskeyCeremonyKind;
      readonly reason: PasskeyFailureReason;
      /** The passkey the response named, when it is one of ours. */
      readonly passkeyId: string | null;
    }
  | {
      readonly type: 'admin_passkeys_removed';
      readonly userId: string;
      readonly removedCount: number;
      /** The admin API key that removed them; absent for the CLI. */
      readonly actor?: AdminApiActor;
    }
  // The admin API (src/admin/http): changes the CLI has no command for, and its keys.
  | {
      readonly type: 'admin_email_verified' | 'admin_password_reset_mail_requested';
      readonly userId: string;
      /** False when the address already was verified (verification only). */
      readonly changed: boolean;
      readonly actor?: AdminApiActor;
    }
  | {
      readonly type: 'admin_session_ended';
      readonly userId: string;
      readonly familyId: string;
      /** False when the session had already ended. */
      readonly changed: boolean;
      readonly actor?: AdminApiActor;
    }
  | {
      readonly type: 'admin_audit_export_started';
      readonly userId: string | null;
      /** The filters of the export, as given. */
      readonly eventType: string | null;
      readonly from: Date | null;
      readonly to: Date | null;
      readonly actor: AdminApiActor;
    }
  | {
      readonly type: 'admin_key_created' | 'admin_key_revoked';
      readonly userId: null;
      readonly adminKeyId: string;
      readonly adminKeyName: string;
      readonly scopes: readonly string[];
    };

/** Why a signing key was made: see the `signing_key_created` event. */
export type SigningKeyCreationReason =
  'rotation' | 'import' | 'automatic_rotation' | 'no_current_key';

export type AuthEventType = AuthEvent['type'];

/**
 * Every event type, at run time: the webhook catalogue is this list (a type added to AuthEvent
 * is delivered to `all` subscriptions at once, and docs/webhooks.md must list it: a check
 * compares them). The two checks below fail to compile when the list and the union differ.
 */
export const AUTH_EVENT_TYPES = [
  'registered',
  'login_succeeded',
  'login_failed',
  'lockout_started',
  'token_refreshed',
  'refresh_failed',
  'reuse_detected',
  'token_revoked',
  'password_confirmation_failed',
  'password_changed',
  'password_reset_requested',
  'password_reset',
  'password_reset_failed',
  'email_verification_failed',
  'email_verification_requested',
  'email_change_requested',
  'email_verified',
  'email_changed',
  'account_deleted',
  'totp_enrollment_started',
  'totp_enabled',
  'totp_recovery_codes_replaced',
  'totp_disabled',
  'totp_recovery_code_used',
  'totp_code_failed',
  'mail_sent',
  'mail_retry_scheduled',
  'mail_failed',
  'sessions_revoked',
  'admin_user_deactivated',
  'admin_user_activated',
  'admin_user_unlocked',
  'admin_sessions_revoked',
  'admin_tokens_purged',
  'admin_user_deleted',
  'admin_totp_reset',
  'admin_audit_viewed',
  'admin_audit_exported',
  'admin_audit_purged',
  'audit_purged',
  'admin_webhook_added',
  'admin_webhook_removed',
  'admin_webhook_replayed',
  'signing_key_created',
  'signing_key_activated',
  'signing_key_retired',
  'refresh_retried',
  'email_code_requested',
  'email_code_login_succeeded',
  'email_code_login_failed',
  'passkey_registered',
  'passkey_renamed',
  'passkey_removed',
  'passkey_login_succeeded',
  'passkey_ceremony_failed',
  'admin_passkeys_removed',
  'admin_email_verified',
  'admin_password_reset_mail_requested',
  'admin_session_ended',
  'admin_audit_export_started',
  'admin_key_created',
  'admin_key_revoked',
  'federation_signed_up',
  'federation_identity_linked',
  'federation_account_reclaimed',
  'federation_login_succeeded',
  'federation_login_failed',
  'federation_link_refused',
  'federation_identity_unlinked',
  'oauth_client_added',
  'oauth_client_removed',
  'oauth_consent_granted',
  'oauth_consent_withdrawn',
  'oauth_token_issued',
  'oauth_refresh_reuse_detected',
] as const satisfies readonly AuthEventType[];

/** Fails to compile when AuthEvent has a type that AUTH_EVENT_TYPES does not list. */
export type EveryAuthEventTypeListed =
  Exclude<AuthEventType, (typeof AUTH_EVENT_TYPES)[number]> extends never ? true : never;
const everyTypeListed: EveryAuthEventTypeListed = true;
void everyTypeListed;

/** An event as listeners receive it: what happened, where the request came from, and when. */
export interface AuthEventRecord<E extends AuthEvent = AuthEvent> {
  readonly event: E;
  readonly origin: RequestOrigin;
  readonly at: Date;
}

/**
 * Why a sign-in with a mailed code was refused. `invalid`: no account, no live code, a used or
 * replaced one, or an unknown link; `bad_code`: a wrong code, counted; `exhausted`: the wrong
 * code that used the last try, which ends the code; `mfa_required` and `bad_mfa_code` as at login.
 */
export type EmailCodeFailureReason =
  | 'invalid'
  | 'expired'
  | 'bad_code'
  | 'exhausted'
  | 'deactivated'
  | 'locked'
  | 'mfa_required'
  | 'bad_mfa_code';

/**
 * Why a sign-in or link through a provider was refused; the callback's `error` codes are these
 * (docs/federation.md lists them). `invalid_code`, `mfa_required` and `bad_mfa_code` are the token
 * exchange's.
 */
export type FederationFailureReason =
  | 'access_denied'
  | 'provider_error'
  | 'provider_unavailable'
  | 'flow_expired'
  | 'provider_mismatch'
  | 'email_not_verified'
  | 'account_not_linked'
  | 'account_disabled'
  | 'account_locked'
  | 'identity_in_use'
  | 'invalid_code'
  | 'mfa_required'
  | 'bad_mfa_code';
