import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  MoreThan,
  PrimaryColumn,
  type FindOptionsWhere,
} from 'typeorm';
import { USER_AGENT_MAX_CHARS } from '../../common/request-origin/request-origin.js';
import { User } from '../../users/entities/user.entity.js';

export const REVOKE_REASON_MAX_LENGTH = 500;

/**
 * One refresh token. The raw value is never stored: only its SHA-256 digest, which is how it is
 * looked up. Rotation links each token to its replacement; all tokens of one login share a
 * `familyId` and count up `generation`, so "descendants of X" is one indexed range. A family is
 * a session: its id is the session id, and its newest token says when and from where it was
 * last used.
 */
@Entity('refresh_tokens')
@Index('IDX_refresh_tokens_family', ['familyId', 'generation'])
export class RefreshToken {
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  /** Hex SHA-256 of the raw token. */
  @Index('IDX_refresh_tokens_tokenHash', { unique: true })
  @Column({ type: String, length: 64 })
  tokenHash: string;

  @Index('IDX_refresh_tokens_userId')
  @Column({ type: String, length: 36 })
  userId: string;

  /** Declared for the foreign key (deleting a user deletes its tokens); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_refresh_tokens_userId' })
  owner?: User;

  /** Id of the first token of the login that started this chain. */
  @Column({ type: String, length: 36 })
  familyId: string;

  /** 0 for the token issued at login, +1 for each rotation. */
  @Column({ type: Number })
  generation: number;

  @Index('IDX_refresh_tokens_expiresAt')
  @Column({ type: Date })
  expiresAt: Date;

  @Column({ type: Date })
  createdAt: Date;

  @Column({ type: String, length: 64 })
  createdByIp: string;

  /** The User-Agent of the request that created this token, cut as RequestOrigin cuts it. */
  @Column({ type: String, length: USER_AGENT_MAX_CHARS, nullable: true })
  createdByUserAgent: string | null;

  /**
   * When the session started: the first token's `createdAt`, copied along the chain, because
   * the expired-token cleanup deletes old generations.
   */
  @Column({ type: Date })
  sessionStartedAt: Date;

  // The migration wrote the default as the literal `false`; saying the same here keeps the
  // entities and the migrated schema identical on both engines (test/schema.e2e-spec.ts).
  @Column({ type: Boolean, default: () => 'false' })
  isRevoked: boolean;

  @Column({ type: Date, nullable: true })
  revokedAt: Date | null;

  @Column({ type: String, length: 64, nullable: true })
  revokedByIp: string | null;

  @Column({ type: String, length: REVOKE_REASON_MAX_LENGTH, nullable: true })
  reasonRevoked: string | null;

  @Column({ type: String, length: 36, nullable: true })
  replacedByTokenId: string | null;

  /**
   * How the session was authenticated (`pwd`, or `pwd otp`), copied along the chain so refreshed
   * access tokens keep their `amr`; null on tokens older than the column, which reads as `pwd`.
   */
  @Column({ type: String, length: 32, nullable: true })
  authMethods: string | null;

  /** Spec §2.2 `IsExpired`. */
  hasExpiredAt(now: Date): boolean {
    return this.expiresAt.getTime() <= now.getTime();
  }

  /** Spec §3.2 "active": neither revoked nor expired. A family has at most one, its newest. */
  isActiveAt(now: Date): boolean {
    return !this.isRevoked && !this.hasExpiredAt(now);
  }
}

/** The filter that finds what `isActiveAt` says, for one user: one row per active session. */
export function activeTokensOf(userId: string, now: Date): FindOptionsWhere<RefreshToken> {
  return { userId, isRevoked: false, expiresAt: MoreThan(now) };
}

/** What a session listing shows of a session's active (newest) token. */
export type SessionToken = Pick<RefreshToken, (typeof SESSION_TOKEN_COLUMNS)[number]>;

/** The columns of SessionToken. */
export const SESSION_TOKEN_COLUMNS = [
  'id',
  'familyId',
  'createdAt',
  'createdByIp',
  'createdByUserAgent',
  'sessionStartedAt',
] as const satisfies readonly (keyof RefreshToken)[];
