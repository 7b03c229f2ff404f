import { isEmail } from 'class-validator';
import type { AdminApiActor, AuthEvent, AuthEventRecord } from '../events/auth-event.js';
import { EMAIL_MAX_LENGTH } from '../users/entities/user.entity.js';
import type { AuditEvent } from './entities/audit-event.entity.js';
import { USER_AGENT_MAX_LENGTH } from './entities/user-agent.entity.js';
import { eventIdText, eventIdTime } from './event-id.js';
import type { UserAgentRepository } from './user-agent.repository.js';

/** Column widths of `auth_events`; longer values are cut rather than lose the whole batch. */
const IP_MAX_LENGTH = 64;
const REQUEST_ID_MAX_LENGTH = 128;

/**
 * What the audit trail stores for one event, before the repository lays it out in its tables
 * (the id as bytes, the instant in the id, the user agent by reference; decision 0028).
 */
export interface AuditRecordRow {
  readonly id: string;
  readonly occurredAt: Date;
  readonly type: string;
  readonly userId: string | null;
  readonly email: string | null;
  readonly ip: string;
  readonly userAgent: string | null;
  readonly requestId: string;
  readonly details: string;
}

/** An audit row as readers see it: what was stored for the event, with its details parsed. */
export interface AuditEntry extends Omit<AuditRecordRow, 'details'> {
  readonly details: Readonly<Record<string, unknown>>;
}

/** The row the audit trail stores for one event. */
export function toAuditEvent(record: AuthEventRecord, id: string): AuditRecordRow {
  const { event, origin, at } = record;
  return {
    id,
    occurredAt: at,
    type: event.type,
    userId: event.userId,
    email: attemptedEmail(event),
    ip: origin.ip.slice(0, IP_MAX_LENGTH),
    userAgent: storedUserAgent(origin),
    requestId: origin.requestId.slice(0, REQUEST_ID_MAX_LENGTH),
    details: JSON.stringify(detailsOf(event)),
  };
}

/** The user agent's text as the trail stores it: cut to its column's length. */
export function storedUserAgent(origin: AuthEventRecord['origin']): string | null {
  return origin.userAgent?.slice(0, USER_AGENT_MAX_LENGTH) ?? null;
}

/**
 * Kept only when no account matched (the user id says who it was otherwise) and only when it is
 * shaped like an address registration would accept: people type passwords into the e-mail field,
 * and such a value must not land in the trail.
 */
function attemptedEmail(event: AuthEvent): string | null {
  if (event.type !== 'login_failed' || event.userId !== null) {
    return null;
  }
  return event.email.length <= EMAIL_MAX_LENGTH && isEmail(event.email) ? event.email : null;
}

/**
 * The fields of each event besides its type and user, picked one by one so that a field added
 * to an event later is not stored until someone decides it may be. A token is named by its
 * session (`familyId`) and `generation`, never by its value or digest (decision 0027).
 */
function detailsOf(event: AuthEvent): Record<string, unknown> {
  switch (event.type) {
    case 'registered':
    case 'login_succeeded':
      return { familyId: event.familyId };
    case 'login_failed':
    case 'refresh_failed':
    case 'password_reset_failed':
    case 'email_verification_failed':
      return { reason: event.reason };
    case 'password_confirmation_failed':
    case 'totp_code_failed':
      return { action: event.action, reason: event.reason };
    case 'totp_enabled':
      return { keptFamilyId: event.keptFamilyId, endedSessionIds: event.endedSessionIds };
    case 'totp_enrollment_started':
    case 'totp_recovery_codes_replaced':
    case 'totp_disabled':
    case 'totp_recovery_code_used':
      return {};
    case 'admin_totp_reset':
      return { changed: event.changed, ...actorOf(event) };
    case 'password_changed':
      return { keptFamilyId: event.keptFamilyId, endedSessionIds: event.endedSessionIds };
    case 'password_reset':
      return { endedSessionIds: event.endedSessionIds };
    case 'password_reset_requested':
    case 'email_verification_requested':
    case 'email_change_requested':
    case 'email_verified':
    case 'email_changed':
    case 'account_deleted':
      return {};
    case 'admin_user_deleted':
      return actorOf(event);
    case 'mail_sent':
    case 'mail_retry_scheduled':
    case 'mail_failed':
      return {
        mailId: event.mailId,
        kind: event.kind,
        attempts: event.attempts,
        error: event.error,
      };
    case 'lockout_started':
      return { failedAttempts: event.failedAttempts, lockedUntil: event.lockedUntil };
    case 'token_refreshed':
    case 'refresh_retried':
      return { familyId: event.familyId, generation: event.generation };
    case 'reuse_detected':
    case 'token_revoked':
      return {
        familyId: event.familyId,
        generation: event.generation,
        sessionEnded: event.sessionEnded,
      };
    case 'sessions_revoked':
      return { keepFamilyId: event.keepFamilyId, endedSessionIds: event.endedSessionIds };
    case 'admin_user_deactivated':
    case 'admin_user_activated':
      return { changed: event.changed, ...actorOf(event) };
    case 'admin_user_unlocked':
      return {
        failedAttempts: event.failedAttempts,
        lockedUntil: event.lockedUntil,
        ...actorOf(event),
      };
    case 'admin_sessions_revoked':
      return { revokedTokenCount: event.revokedTokenCount, ...actorOf(event) };
    case 'admin_tokens_purged':
      return { deletedCount: event.deletedCount };
    case 'admin_audit_viewed':
      return { rowCount: event.rowCount };
    case 'admin_audit_exported':
      return { before: event.before, rowCount: event.rowCount };
    case 'admin_audit_purged':
    case 'audit_purged':
      return {
        cutoff: event.cutoff,
        retentionDays: event.retentionDays,
        deletedCount: event.deletedCount,
      };
    case 'signing_key_created':
      return {
        kid: event.kid,
        algorithm: event.algorithm,
        source: event.source,
        reason: event.reason,
        activatesAt: event.activatesAt,
        // `reason` is the event's own (rotation, import…): the operator's goes as adminReason.
        ...(event.actor === undefined
          ? {}
          : {
              adminKeyId: event.actor.adminKeyId,
              adminKeyName: event.actor.adminKeyName,
              adminReason: event.actor.reason,
            }),
      };
    case 'signing_key_activated':
      return { kid: event.kid, algorithm: event.algorithm, scheduledFor: event.scheduledFor };
    case 'signing_key_retired':
      return {
        kid: event.kid,
        algorithm: event.algorithm,
        previousState: event.previousState,
        ...actorOf(event),
      };
    case 'email_code_requested':
      return {};
    case 'email_code_login_succeeded':
      return { familyId: event.familyId };
    case 'email_code_login_failed':
      return { reason: event.reason };
    case 'admin_webhook_added':
    case 'admin_webhook_removed':
      return { subscriptionId: event.subscriptionId, ...actorOf(event) };
    case 'admin_webhook_replayed':
      return {
        deliveryId: event.deliveryId,
        replayedCount: event.replayedCount,
        ...actorOf(event),
      };
    case 'passkey_registered':
    case 'passkey_renamed':
    case 'passkey_removed':
      return { passkeyId: event.passkeyId };
    case 'passkey_login_succeeded':
      return { familyId: event.familyId, passkeyId: event.passkeyId };
    case 'passkey_ceremony_failed':
      return { ceremony: event.ceremony, reason: event.reason, passkeyId: event.passkeyId };
    case 'admin_passkeys_removed':
      return { removedCount: event.removedCount, ...actorOf(event) };
    case 'admin_email_verified':
    case 'admin_password_reset_mail_requested':
      return { changed: event.changed, ...actorOf(event) };
    case 'admin_session_ended':
      return { familyId: event.familyId, changed: event.changed, ...actorOf(event) };
    case 'admin_audit_export_started':
      return { eventType: event.eventType, from: event.from, to: event.to, ...actorOf(event) };
    case 'federation_signed_up':
      return { provider: event.provider, identityId: event.identityId };
    case 'federation_identity_linked':
      return { provider: event.provider, identityId: event.identityId, via: event.via };
    case 'federation_account_reclaimed':
      return {
        provider: event.provider,
        identityId: event.identityId,
        removedPasskeys: event.removedPasskeys,
        removedIdentities: event.removedIdentities,
        endedSessionIds: event.endedSessionIds,
      };
    case 'federation_login_succeeded':
      return { familyId: event.familyId, provider: event.provider };
    case 'federation_login_failed':
    case 'federation_link_refused':
      return { provider: event.provider, reason: event.reason };
    case 'federation_identity_unlinked':
      return { provider: event.provider, identityId: event.identityId, ...actorOf(event) };
    case 'oauth_client_added':
    case 'oauth_client_removed':
      return {
        clientId: event.clientId,
        ...actorOf(event),
        ...(event.selfRegistered === true ? { selfRegistered: true } : {}),
      };
    case 'oauth_consent_granted':
    case 'oauth_consent_withdrawn':
      return { clientId: event.clientId, scopes: event.scopes };
    case 'oauth_token_issued':
      return {
        clientId: event.clientId,
        grantType: event.grantType,
        hasRefreshToken: event.hasRefreshToken,
      };
    case 'oauth_refresh_reuse_detected':
      return { clientId: event.clientId };
    case 'admin_key_created':
    case 'admin_key_revoked':
      return {
        adminKeyId: event.adminKeyId,
        adminKeyName: event.adminKeyName,
        scopes: event.scopes,
      };
  }
}

/**
 * The admin API key that made a change and the operator's reason: the key by id and name, never
 * its secret. Nothing for the CLI's events, whose rows stay as they were.
 */
function actorOf(event: { readonly actor?: AdminApiActor }): Record<string, unknown> {
  return event.actor === undefined
    ? {}
    : {
        adminKeyId: event.actor.adminKeyId,
        adminKeyName: event.actor.adminKeyName,
        reason: event.actor.reason,
      };
}

/**
 * An audit row as readers see it (the listing, the export): the id as UUID text, the instant it
 * holds, the user agent's text (`userAgent`, looked up by the caller) and the details parsed.
 */
export function toAuditEntry(row: AuditEvent, userAgent: string | null): AuditEntry {
  const parsed: unknown = JSON.parse(row.details);
  return {
    id: eventIdText(row.id),
    occurredAt: eventIdTime(row.id),
    type: row.type,
    userId: row.userId,
    email: row.email,
    ip: row.ip,
    userAgent,
    requestId: row.requestId,
    details:
      typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {},
  };
}

/** Rows as readers see them (AuditEntry), their user agents looked up in one query. */
export async function toAuditEntries(
  rows: readonly AuditEvent[],
  userAgents: Pick<UserAgentRepository, 'textsOf'>,
): Promise<AuditEntry[]> {
  const texts = await userAgents.textsOf(
    rows.flatMap((row) => (row.userAgentId === null ? [] : [row.userAgentId])),
  );
  return rows.map((row) =>
    toAuditEntry(row, row.userAgentId === null ? null : (texts.get(row.userAgentId) ?? null)),
  );
}
