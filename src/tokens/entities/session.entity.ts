import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { USER_AGENT_MAX_CHARS } from '../../common/request-origin/request-origin.js';
import { User } from '../../users/entities/user.entity.js';

export const END_REASON_MAX_LENGTH = 500;

/**
 * One session: what a login or a registration started, and what its refresh tokens carry on.
 * Its facts are stored once here, not on every token: who, since when, how authenticated, and,
 * moved in place by each rotation, its newest token's generation, last use and expiry. The id
 * is the family id of decision 0003 and the `sid` claim of its access tokens (decision 0027).
 */
@Entity('sessions')
export class Session {
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Index('IDX_sessions_userId')
  @Column({ type: String, length: 36 })
  userId: string;

  /** Declared for the foreign key (deleting a user deletes its sessions); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_sessions_userId' })
  owner?: User;

  /** The login or registration. */
  @Column({ type: Date })
  startedAt: Date;

  /** How the session was authenticated (`pwd`, or `pwd otp`); null reads as `pwd`. */
  @Column({ type: String, length: 32, nullable: true })
  authMethods: string | null;

  /** The newest token's generation: 0 at login, +1 for each rotation. Only it can be active. */
  @Column({ type: Number })
  generation: number;

  /** When, from where and with what the newest token was issued. */
  @Column({ type: Date })
  lastUsedAt: Date;

  @Column({ type: String, length: 64 })
  lastIp: string;

  @Column({ type: String, length: USER_AGENT_MAX_CHARS, nullable: true })
  lastUserAgent: string | null;

  /** The newest token's expiry: the session's own. */
  @Column({ type: Date })
  expiresAt: Date;

  /**
   * For the cleanup: no token of this session was created before this instant, as far as the
   * cleanup needs to know (it never moves back). The cleanup reads the sessions that may have
   * something to delete through its index, oldest first; a rotation never changes it.
   */
  @Index('IDX_sessions_oldestTokenAt')
  @Column({ type: Date })
  oldestTokenAt: Date;

  /** How the session ended (logout, revoke-all, reuse, the cap...); null while it has not. */
  @Column({ type: Date, nullable: true })
  endedAt: Date | null;

  @Column({ type: String, length: 64, nullable: true })
  endedByIp: string | null;

  @Column({ type: String, length: END_REASON_MAX_LENGTH, nullable: true })
  endReason: string | null;

  /** Spec §3.2 "active": neither ended nor expired. */
  isActiveAt(now: Date): boolean {
    return this.endedAt === null && this.expiresAt.getTime() > now.getTime();
  }
}

/** What a session listing shows. */
export type ListedSession = Pick<Session, (typeof LISTED_SESSION_COLUMNS)[number]>;

/** The columns of ListedSession. */
export const LISTED_SESSION_COLUMNS = [
  'id',
  'startedAt',
  'generation',
  'lastUsedAt',
  'lastIp',
  'lastUserAgent',
] as const satisfies readonly (keyof Session)[];
