import { printable } from '../../common/text/printable.js';
import type { AdminKeySummary } from '../keys/admin-keys.service.js';
import type { AuditPurgeResult } from '../../audit/audit-retention.service.js';
import type { AuditEntry } from '../../audit/audit-trail.service.js';
import type { EmailCollision } from '../../common/identity/email-collisions.js';
import type { AccountSummary } from '../../users/users.service.js';
import type {
  Account,
  ActivationResult,
  AuditResult,
  DeactivationResult,
  PasskeysRemovedResult,
  SessionsResult,
  UnlockResult,
} from '../admin.service.js';

/** What each command prints on success: plain sentences, and the audit trail as a table. */
export const CliOutput = {
  deactivated: ({ account, changed, revokedTokenCount }: DeactivationResult): string =>
    `${changed ? `Deactivated ${accountName(account)}` : `${accountName(account)} was already deactivated`}; ` +
    `revoked ${revokedTokenCount} refresh token(s).`,

  activated: ({ account, changed }: ActivationResult): string =>
    changed ? `Activated ${accountName(account)}.` : `${accountName(account)} was already active.`,

  unlocked: ({ account, failedAttempts, lockedUntil }: UnlockResult): string => {
    if (failedAttempts === 0 && lockedUntil === null) {
      return `${accountName(account)} had no failed logins or lockout to clear.`;
    }
    const lockout =
      lockedUntil === null ? 'no lockout' : `the lockout until ${lockedUntil.toISOString()}`;
    return `Unlocked ${accountName(account)}: cleared ${failedAttempts} failed login(s) and ${lockout}.`;
  },

  deleted: (account: Account): string =>
    `Deleted ${accountName(account)}, its refresh tokens, mailed-link tokens and unsent mail.`,

  mfaReset: ({ account, changed }: ActivationResult): string =>
    changed
      ? `Removed the second factor and recovery codes of ${accountName(account)}; it logs in with the password alone until it enrols again.`
      : `${accountName(account)} had no second factor to remove.`,

  passkeysRemoved: ({ account, removedCount }: PasskeysRemovedResult): string =>
    removedCount > 0
      ? `Removed ${removedCount} passkey(s) of ${accountName(account)}.`
      : `${accountName(account)} had no passkeys to remove.`,

  sessionsRevoked: ({ account, revokedTokenCount }: SessionsResult): string =>
    `Revoked ${revokedTokenCount} refresh token(s) of ${accountName(account)}.`,

  purged: (deletedCount: number): string => `Deleted ${deletedCount} expired refresh token(s).`,

  auditPurged: ({ cutoff, retentionDays, deletedCount }: AuditPurgeResult): string =>
    `Deleted ${deletedCount} audit event(s) older than ${cutoff.toISOString()} ` +
    `(Audit__RetentionDays=${retentionDays}).`,

  auditExported: (rowCount: number, before: Date, file: string): string =>
    `Exported ${rowCount} audit event(s) older than ${before.toISOString()} to ${file}.`,

  /** One line of `audit:export`: the fields of the listing, in a fixed order, details parsed. */
  auditLine: (entry: AuditEntry): string =>
    JSON.stringify({
      id: entry.id,
      occurredAt: entry.occurredAt.toISOString(),
      type: entry.type,
      userId: entry.userId,
      email: entry.email,
      ip: entry.ip,
      userAgent: entry.userAgent,
      requestId: entry.requestId,
      details: entry.details,
    }),

  /** The one time the secret is shown: on a line of its own, so a script can take it. */
  adminKeyCreated: ({ key, secret }: { key: AdminKeySummary; secret: string }): string =>
    [
      `Created admin key ${key.name} (${key.id}) with scopes ${key.scopes.join(', ')}.`,
      'Its secret follows; it is not stored and cannot be shown again:',
      secret,
    ].join('\n'),

  adminKeyRevoked: (key: AdminKeySummary): string =>
    `Revoked admin key ${key.name} (${key.id}); it opens nothing from now on.`,

  adminKeys: (keys: readonly AdminKeySummary[]): string => {
    if (keys.length === 0) {
      return 'No admin keys. Create one with admin-keys:create; until then /api/admin/ answers 404.';
    }
    return keys
      .map(
        (key) =>
          `${key.name}  ${key.id}  scopes ${key.scopes.join(',')}  created ` +
          `${key.createdAt.toISOString()}  ` +
          (key.revokedAt === null ? 'active' : `revoked ${key.revokedAt.toISOString()}`),
      )
      .join('\n');
  },

  emailCollisions: (collisions: readonly EmailCollision<AccountSummary>[]): string => {
    if (collisions.length === 0) {
      return 'No two accounts share an e-mail address in canonical form.';
    }
    const groups = collisions.map(({ canonical, accounts }) =>
      [
        `${printable(canonical)} (canonical form) is the address of ${accounts.length} accounts:`,
        ...accounts.map(
          (account) =>
            `  user ${account.id}  ${printable(account.email)}  created ` +
            `${account.createdAt.toISOString()}  last login ` +
            `${account.lastLoginAt?.toISOString() ?? 'never'}`,
        ),
      ].join('\n'),
    );
    return [
      `${collisions.length} canonical address(es) belong to more than one account. Leave one ` +
        'account on each (give the others another address, or remove them), then migrate.',
      '',
      groups.join('\n\n'),
    ].join('\n');
  },

  audit: ({ account, entries }: AuditResult): string => {
    if (entries.length === 0) {
      return `No audit events for ${accountName(account)}.`;
    }
    const header = ['TIME', 'EVENT', 'IP', 'REQUEST ID', 'DETAILS'];
    const rows = entries.map(auditRow);
    const widths = header
      .slice(0, -1)
      .map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
    const line = (cells: readonly string[]): string =>
      cells
        .map((cell, column) => (column < widths.length ? cell.padEnd(widths[column]) : cell))
        .join('  ')
        .trimEnd();
    return [
      `Audit trail of ${accountName(account)}: ${entries.length} event(s), newest first.`,
      '',
      line(header),
      ...rows.map(line),
    ].join('\n');
  },
} as const;

function accountName(account: Account): string {
  return `${account.email} (user ${account.id})`;
}

function auditRow(entry: AuditEntry): string[] {
  const details = Object.entries(entry.details).map(([key, value]) => `${key}=${show(value)}`);
  if (entry.userAgent !== null) {
    details.push(`userAgent=${show(entry.userAgent)}`);
  }
  return [
    entry.occurredAt.toISOString(),
    entry.type,
    printable(entry.ip),
    printable(entry.requestId),
    details.join(' '),
  ];
}

function show(value: unknown): string {
  if (value === null || value === undefined) {
    return '-';
  }
  if (Array.isArray(value)) {
    return value.length === 0 ? '[]' : value.map(show).join(',');
  }
  return typeof value === 'string' ? printable(value) : JSON.stringify(value);
}
