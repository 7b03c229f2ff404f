import type { AuthEvent } from '../events/auth-event.js';
import { toAuditEvent } from './audit-row.js';

const AT = new Date('2026-01-01T12:00:00.000Z');
const ORIGIN = { ip: '192.0.2.1', userAgent: 'curl/8.5.0', requestId: 'req-42' };
const USER = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const FAMILY = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const OTHER_SESSION = '886313e1-3b8a-4372-9b90-0c9aee199e5d';

const row = (event: AuthEvent) => toAuditEvent({ event, origin: ORIGIN, at: AT }, 'the-id');

describe(toAuditEvent.name, () => {
  it('should copy the origin, the time, the type and the user', () => {
    expect({
      ...row({ type: 'registered', userId: USER, familyId: FAMILY }),
    }).toEqual({
      id: 'the-id',
      occurredAt: AT,
      type: 'registered',
      userId: USER,
      email: null,
      ip: '192.0.2.1',
      userAgent: 'curl/8.5.0',
      requestId: 'req-42',
      details: JSON.stringify({ familyId: FAMILY }),
    });
  });

  it.each(
    (
      [
        [{ type: 'login_succeeded', userId: USER, familyId: FAMILY }, { familyId: FAMILY }],
        [
          { type: 'login_failed', userId: USER, email: 'a@example.com', reason: 'bad_password' },
          { reason: 'bad_password' },
        ],
        [
          {
            type: 'lockout_started',
            userId: USER,
            failedAttempts: 5,
            lockedUntil: new Date('2026-01-01T12:15:00.000Z'),
          },
          { failedAttempts: 5, lockedUntil: '2026-01-01T12:15:00.000Z' },
        ],
        [
          {
            type: 'token_refreshed',
            userId: USER,
            familyId: FAMILY,
            generation: 4,
          },
          { familyId: FAMILY, generation: 4 },
        ],
        [{ type: 'refresh_failed', userId: null, reason: 'invalid' }, { reason: 'invalid' }],
        [
          {
            type: 'reuse_detected',
            userId: USER,
            familyId: FAMILY,
            generation: 2,
            sessionEnded: true,
          },
          { familyId: FAMILY, generation: 2, sessionEnded: true },
        ],
        [
          {
            type: 'token_revoked',
            userId: USER,
            familyId: FAMILY,
            generation: 0,
            sessionEnded: true,
            wasRotated: true,
          },
          { familyId: FAMILY, generation: 0, sessionEnded: true },
        ],
        [
          {
            type: 'sessions_revoked',
            userId: USER,
            keepFamilyId: null,
            endedSessionIds: [OTHER_SESSION],
          },
          { keepFamilyId: null, endedSessionIds: [OTHER_SESSION] },
        ],
        [{ type: 'admin_user_deactivated', userId: USER, changed: true }, { changed: true }],
        [{ type: 'admin_user_activated', userId: USER, changed: false }, { changed: false }],
        [
          { type: 'admin_user_unlocked', userId: USER, failedAttempts: 6, lockedUntil: null },
          { failedAttempts: 6, lockedUntil: null },
        ],
        [
          { type: 'admin_sessions_revoked', userId: USER, revokedTokenCount: 3 },
          { revokedTokenCount: 3 },
        ],
        [{ type: 'admin_tokens_purged', userId: null, deletedCount: 12 }, { deletedCount: 12 }],
        [{ type: 'admin_audit_viewed', userId: USER, rowCount: 7 }, { rowCount: 7 }],
        [
          { type: 'admin_audit_exported', userId: null, before: AT, rowCount: 7 },
          { before: '2026-01-01T12:00:00.000Z', rowCount: 7 },
        ],
        ...(['admin_audit_purged', 'audit_purged'] as const).map((type) => [
          { type, userId: null, cutoff: AT, retentionDays: 365, deletedCount: 3 },
          { cutoff: '2026-01-01T12:00:00.000Z', retentionDays: 365, deletedCount: 3 },
        ]),
        [{ type: 'admin_user_deleted', userId: USER }, {}],
        [
          {
            type: 'password_confirmation_failed',
            userId: USER,
            action: 'account_deletion',
            reason: 'bad_password',
          },
          { action: 'account_deletion', reason: 'bad_password' },
        ],
        [
          {
            type: 'password_changed',
            userId: USER,
            keptFamilyId: FAMILY,
            endedSessionIds: [OTHER_SESSION],
          },
          { keptFamilyId: FAMILY, endedSessionIds: [OTHER_SESSION] },
        ],
        [{ type: 'password_reset_requested', userId: USER }, {}],
        [
          { type: 'password_reset', userId: USER, endedSessionIds: [OTHER_SESSION] },
          { endedSessionIds: [OTHER_SESSION] },
        ],
        [{ type: 'password_reset_failed', userId: null, reason: 'invalid' }, { reason: 'invalid' }],
        [
          { type: 'email_verification_failed', userId: USER, reason: 'expired' },
          { reason: 'expired' },
        ],
        [{ type: 'email_verification_requested', userId: USER }, {}],
        [{ type: 'email_change_requested', userId: USER }, {}],
        [{ type: 'email_verified', userId: USER }, {}],
        [{ type: 'email_changed', userId: USER }, {}],
        [{ type: 'account_deleted', userId: USER }, {}],
        [
          {
            type: 'mail_sent',
            userId: USER,
            mailId: OTHER_SESSION,
            kind: 'password_reset',
            attempts: 1,
            error: null,
          },
          { mailId: OTHER_SESSION, kind: 'password_reset', attempts: 1, error: null },
        ],
        [
          {
            type: 'mail_failed',
            userId: null,
            mailId: OTHER_SESSION,
            kind: 'email_change',
            attempts: 10,
            error: 'ECONNECTION',
          },
          { mailId: OTHER_SESSION, kind: 'email_change', attempts: 10, error: 'ECONNECTION' },
        ],
        [
          { type: 'refresh_retried', userId: USER, familyId: FAMILY, generation: 3 },
          { familyId: FAMILY, generation: 3 },
        ],
      ] as [AuthEvent, Record<string, unknown>][]
    ).map(([event, details]) => ({ event, details })),
  )('should keep the details of $event.type', ({ event, details }) => {
    const stored = row(event);

    expect(stored.type).toBe(event.type);
    expect(stored.userId).toBe(event.userId);
    expect(JSON.parse(stored.details)).toEqual(details);
  });

  it('should keep the attempted e-mail of a login to an unknown account', () => {
    const stored = row({
      type: 'login_failed',
      userId: null,
      email: 'nobody@example.com',
      reason: 'unknown_email',
    });

    expect(stored.email).toBe('nobody@example.com');
    expect(stored.userId).toBeNull();
  });

  it.each([
    ['a password typed into the e-mail field', 'S3cure!pass'],
    ['an address too long for the column', `${'a'.repeat(60)}@${'b'.repeat(200)}.example.com`],
  ])('should not keep %s', (_case, email) => {
    const stored = row({ type: 'login_failed', userId: null, email, reason: 'unknown_email' });

    expect(stored.email).toBeNull();
    expect(JSON.stringify(stored)).not.toContain(email);
  });

  it('should not keep the e-mail when the account is known', () => {
    expect(
      row({ type: 'login_failed', userId: USER, email: 'a@example.com', reason: 'locked' }).email,
    ).toBeNull();
  });

  it('should cut origin values to the column widths', () => {
    const stored = toAuditEvent(
      {
        event: { type: 'refresh_failed', userId: null, reason: 'invalid' },
        origin: { ip: 'i'.repeat(100), userAgent: 'u'.repeat(300), requestId: 'r'.repeat(200) },
        at: AT,
      },
      'the-id',
    );

    expect([stored.ip.length, stored.userAgent?.length, stored.requestId.length]).toEqual([
      64, 256, 128,
    ]);
  });
});
