import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { BinaryPrimaryColumn } from '../../database/column-types.js';
import { END_REASON_MAX_LENGTH, Session } from './session.entity.js';

/** The longest reason a logout may give: it becomes its session's end reason. */
export const REVOKE_REASON_MAX_LENGTH = END_REASON_MAX_LENGTH;

/**
 * One refresh token: the SHA-256 digest of its raw value (32 bytes; the raw value is never
 * stored), the session it belongs to and its place in it. Everything else a token used to carry
 * is its session's (decision 0027): it is active when its generation is its session's newest and
 * the session has neither ended nor expired; a token of an older generation was rotated (revoked
 * when its successor was created, "Replaced by new token") and presenting it again is reuse. A
 * token has no id of its own: it is named by (sessionId, generation).
 */
@Entity('refresh_tokens', { withoutRowid: true })
@Index('IDX_refresh_tokens_sessionId', ['sessionId'])
export class RefreshToken {
  @BinaryPrimaryColumn()
  tokenHash: Buffer;

  @Column({ type: String, length: 36 })
  sessionId: string;

  /** Declared for the foreign key (deleting a session deletes its tokens); never loaded. */
  @ManyToOne(() => Session, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'sessionId', foreignKeyConstraintName: 'FK_refresh_tokens_sessionId' })
  session?: Session;

  /** 0 for the token issued at login, +1 for each rotation. */
  @Column({ type: Number })
  generation: number;

  @Column({ type: Date })
  createdAt: Date;
}
