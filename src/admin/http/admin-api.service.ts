import { Injectable, Logger } from '@nestjs/common';
import { AdminApiMessages } from '../admin-api.messages.js';
import { AdminService, type AccountRef } from '../admin.service.js';
import type { AuditEntry } from '../../audit/audit-trail.service.js';
import { InvalidArgumentError } from '../../common/errors/domain-errors.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { AuthEvents } from '../../events/auth-events.js';
import { forRequest } from '../../logging/log-fields.js';
import { MailOutbox } from '../../mail/mail-outbox.js';
import { adminActorOf, type AdminCall } from '../../common/admin-route/current-admin.decorator.js';
import type { AdminChangeResponseDto } from '../../common/admin-route/admin-change-response.dto.js';
import type { AdminReasonDto } from '../../common/admin-route/admin-reason.dto.js';
import {
  AdminSessionResponseDto,
  type AdminSessionListResponseDto,
} from './dto/admin-session-response.dto.js';
import {
  AdminUserDetailsResponseDto,
  AdminUserResponseDto,
  type AdminUserListResponseDto,
} from './dto/admin-user-response.dto.js';
import type { AuditFilterDto, AuditQueryDto } from './dto/audit-query.dto.js';
import {
  AuditEventResponseDto,
  type AuditPageResponseDto,
} from './dto/audit-event-response.dto.js';
import { DEFAULT_PAGE_SIZE, type ListUsersQueryDto } from './dto/list-users-query.dto.js';

/**
 * The admin API's side of each operation: the request in, the answer out. The rules are
 * AdminService's, the same methods the admin CLI calls, so the two cannot disagree; this class
 * only names the account by id, adds the key and the reason to the event, and shapes the body.
 */
@Injectable()
export class AdminApiService {
  private readonly logger = new Logger(AdminApiService.name);

  constructor(
    private readonly admin: AdminService,
    private readonly mail: MailOutbox,
    private readonly unitOfWork: UnitOfWork,
    private readonly events: AuthEvents,
  ) {}

  async listUsers(query: ListUsersQueryDto): Promise<AdminUserListResponseDto> {
    const emailPrefix = query.emailPrefix ?? null;
    const page = await this.admin.findAccounts({
      email: query.email ?? null,
      emailPrefix,
      state: query.state ?? null,
      after: decodeCursor(query.cursor, emailPrefix === null ? 'id' : 'email'),
      limit: query.limit ?? DEFAULT_PAGE_SIZE,
    });
    return {
      users: page.items.map((user) => AdminUserResponseDto.from(user)),
      nextCursor:
        page.next === null ? null : encodeCursor(emailPrefix === null ? 'id' : 'email', page.next),
    };
  }

  async user(id: string): Promise<AdminUserDetailsResponseDto> {
    return AdminUserDetailsResponseDto.fromDetails(await this.admin.accountDetails({ id }));
  }

  async deactivate(
    id: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    const result = await this.admin.deactivate({ id }, call.origin, adminActorOf(call, body));
    this.log(call, 'deactivated', id);
    return { userId: id, changed: result.changed, revokedSessions: result.revokedTokenCount };
  }

  async activate(
    id: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    const { changed } = await this.admin.activate({ id }, call.origin, adminActorOf(call, body));
    this.log(call, 'activated', id);
    return { userId: id, changed };
  }

  async unlock(id: string, body: AdminReasonDto, call: AdminCall): Promise<AdminChangeResponseDto> {
    const result = await this.admin.unlock({ id }, call.origin, adminActorOf(call, body));
    this.log(call, 'unlocked', id);
    return { userId: id, changed: result.failedAttempts > 0 || result.lockedUntil !== null };
  }

  async logout(id: string, body: AdminReasonDto, call: AdminCall): Promise<AdminChangeResponseDto> {
    const result = await this.admin.revokeAllSessions(
      { id },
      call.origin,
      adminActorOf(call, body),
    );
    this.log(call, 'logged out', id);
    return {
      userId: id,
      changed: result.revokedTokenCount > 0,
      revokedSessions: result.revokedTokenCount,
    };
  }

  async resetMfa(
    id: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    const { changed } = await this.admin.resetMfa({ id }, call.origin, adminActorOf(call, body));
    this.log(call, 'reset the second factor of', id);
    return { userId: id, changed };
  }

  async removePasskeys(
    id: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    const { removedCount } = await this.admin.removePasskeys(
      { id },
      call.origin,
      adminActorOf(call, body),
    );
    this.log(call, `removed ${removedCount} passkey(s) of`, id);
    return { userId: id, changed: removedCount > 0, removedPasskeys: removedCount };
  }

  async verifyEmail(
    id: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    const { changed } = await this.admin.verifyEmail({ id }, call.origin, adminActorOf(call, body));
    this.log(call, 'verified the e-mail of', id);
    return { userId: id, changed };
  }

  /**
   * Queues a password-reset mail as `POST /password/forgot` would, with the administrator's event
   * in the same transaction. Here rather than in AdminService because only the service process
   * has a mail sender (the CLI has none, and no such command).
   */
  async sendPasswordResetMail(
    id: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    this.mail.assertEnabled();
    const account: AccountRef = { id };
    const user = await this.admin.findUser(account);
    await this.unitOfWork.transaction(async (m) => {
      await this.mail.requestWithin(m, 'password_reset', user.email, call.origin);
      await this.events.record(
        m,
        {
          type: 'admin_password_reset_mail_requested',
          userId: user.id,
          changed: true,
          actor: adminActorOf(call, body),
        },
        call.origin,
      );
    });
    this.mail.wake();
    this.log(call, 'queued a password-reset mail to', id);
    return { userId: id, changed: true };
  }

  async deleteUser(
    id: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    await this.admin.deleteUser({ id }, call.origin, adminActorOf(call, body));
    this.log(call, 'deleted', id);
    return { userId: id, changed: true };
  }

  async sessions(id: string): Promise<AdminSessionListResponseDto> {
    const { sessions } = await this.admin.sessionsOf({ id });
    return {
      userId: id,
      sessions: sessions.map((session) => AdminSessionResponseDto.from(session)),
    };
  }

  async endSession(
    id: string,
    sessionId: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    const { changed } = await this.admin.endSession(
      { id },
      sessionId,
      call.origin,
      adminActorOf(call, body),
    );
    this.log(call, `ended session ${sessionId} of`, id);
    return { userId: id, changed, revokedSessions: changed ? 1 : 0 };
  }

  async audit(query: AuditQueryDto): Promise<AuditPageResponseDto> {
    const page = await this.admin.auditPage({
      ...filtersOf(query),
      before: decodeAuditCursor(query.cursor),
      limit: query.limit ?? DEFAULT_PAGE_SIZE,
    });
    return {
      events: page.items.map((entry) => AuditEventResponseDto.from(entry)),
      nextCursor: page.next,
    };
  }

  /** The JSON Lines export: one event per line, newest first, as the listing shows them. */
  async *auditLines(query: AuditFilterDto, call: AdminCall): AsyncGenerator<string> {
    const entries: AsyncGenerator<AuditEntry> = this.admin.exportAuditLines(
      filtersOf(query),
      call.origin,
      adminActorOf(call, {}),
    );
    for await (const entry of entries) {
      yield `${JSON.stringify(AuditEventResponseDto.from(entry))}\n`;
    }
  }

  private log(call: AdminCall, what: string, userId: string): void {
    this.logger.log(
      `Admin key ${call.key.name} ${what} user ${userId}`,
      forRequest(call.origin.requestId),
    );
  }
}

function filtersOf(query: AuditFilterDto) {
  const from = query.from === undefined ? null : new Date(query.from);
  const to = query.to === undefined ? null : new Date(query.to);
  if (
    (from !== null && Number.isNaN(from.getTime())) ||
    (to !== null && Number.isNaN(to.getTime()))
  ) {
    throw new InvalidArgumentError(AdminApiMessages.badInstant);
  }
  return { userId: query.userId ?? null, type: query.type ?? null, from, to };
}

/**
 * Cursors are opaque to callers: the base64url of the order column and the last value. A cursor
 * of another ordering (the filters changed between pages) or anything else is refused.
 */
function encodeCursor(order: 'id' | 'email', value: string): string {
  return Buffer.from(`${order}:${value}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string | undefined, order: 'id' | 'email'): string {
  if (cursor === undefined) {
    return '';
  }
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const prefix = `${order}:`;
  if (
    !text.startsWith(prefix) ||
    text.length === prefix.length ||
    encodeCursor(order, text.slice(prefix.length)) !== cursor
  ) {
    throw new InvalidArgumentError(AdminApiMessages.badCursor);
  }
  return text.slice(prefix.length);
}

const EVENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The audit cursor is the last event's id, a UUIDv7. */
function decodeAuditCursor(cursor: string | undefined): string | null {
  if (cursor === undefined) {
    return null;
  }
  if (!EVENT_ID.test(cursor)) {
    throw new InvalidArgumentError(AdminApiMessages.badCursor);
  }
  return cursor;
}
