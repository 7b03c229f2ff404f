import type { AuditEntry } from '../../audit/audit-trail.service.js';
import { CliOutput } from './cli-output.js';

const ACCOUNT = { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', email: 'alice@example.com' };
const NAME = `alice@example.com (user ${ACCOUNT.id})`;

function entry(overrides: Partial<AuditEntry>): AuditEntry {
  return {
    id: 'id',
    occurredAt: new Date('2026-01-01T00:00:00.000Z'),
    type: 'login_succeeded',
    userId: ACCOUNT.id,
    email: null,
    ip: '192.0.2.1',
    userAgent: null,
    requestId: 'req-1',
    details: {},
    ...overrides,
  };
}

describe('CliOutput', () => {
  it.each([
    [
      CliOutput.deactivated({ account: ACCOUNT, changed: true, revokedTokenCount: 2 }),
      `Deactivated ${NAME}; revoked 2 refresh token(s).`,
    ],
    [
      CliOutput.deactivated({ account: ACCOUNT, changed: false, revokedTokenCount: 0 }),
      `${NAME} was already deactivated; revoked 0 refresh token(s).`,
    ],
    [CliOutput.activated({ account: ACCOUNT, changed: true }), `Activated ${NAME}.`],
    [CliOutput.activated({ account: ACCOUNT, changed: false }), `${NAME} was already active.`],
    [
      CliOutput.unlocked({
        account: ACCOUNT,
        failedAttempts: 5,
        lockedUntil: new Date('2026-01-01T00:15:00.000Z'),
      }),
      `Unlocked ${NAME}: cleared 5 failed login(s) and the lockout until 2026-01-01T00:15:00.000Z.`,
    ],
    [
      CliOutput.unlocked({ account: ACCOUNT, failedAttempts: 2, lockedUntil: null }),
      `Unlocked ${NAME}: cleared 2 failed login(s) and no lockout.`,
    ],
    [
      CliOutput.unlocked({ account: ACCOUNT, failedAttempts: 0, lockedUntil: null }),
      `${NAME} had no failed logins or lockout to clear.`,
    ],
    [
      CliOutput.sessionsRevoked({ account: ACCOUNT, revokedTokenCount: 3 }),
      `Revoked 3 refresh token(s) of ${NAME}.`,
    ],
    [CliOutput.purged(12), 'Deleted 12 expired refresh token(s).'],
    [CliOutput.audit({ account: ACCOUNT, entries: [] }), `No audit events for ${NAME}.`],
  ])('should say %j', (output, expected) => {
    expect(output).toBe(expected);
  });

  it('should print the audit trail as aligned columns, one event a line', () => {
    const output = CliOutput.audit({
      account: ACCOUNT,
      entries: [
        entry({
          occurredAt: new Date('2026-01-01T00:05:00.000Z'),
          type: 'reuse_detected',
          ip: '2001:db8::1',
          requestId: 'a-much-longer-request-id',
          details: { familyId: 'f1', tokenId: 't1', revokedTokenIds: ['t2', 't3'] },
          userAgent: 'curl/8.5.0',
        }),
        entry({ type: 'login_failed', details: { reason: 'bad_password' } }),
      ],
    });

    expect(output.split('\n')).toEqual([
      `Audit trail of ${NAME}: 2 event(s), newest first.`,
      '',
      'TIME                      EVENT           IP           REQUEST ID                DETAILS',
      '2026-01-01T00:05:00.000Z  reuse_detected  2001:db8::1  a-much-longer-request-id  familyId=f1 tokenId=t1 revokedTokenIds=t2,t3 userAgent=curl/8.5.0',
      '2026-01-01T00:00:00.000Z  login_failed    192.0.2.1    req-1                     reason=bad_password',
    ]);
  });

  it('should quote values a client chose when they hold spaces or control characters', () => {
    const output = CliOutput.audit({
      account: ACCOUNT,
      entries: [
        entry({
          userAgent: 'Mozilla/5.0 (X11)\u001b[31m',
          details: { keepFamilyId: null, revokedTokenIds: [], changed: true },
        }),
      ],
    });

    expect(output).toContain(
      'keepFamilyId=- revokedTokenIds=[] changed=true userAgent="Mozilla/5.0 (X11)\\u001b[31m"',
    );
    expect(output).not.toContain('\u001b');
  });
});
