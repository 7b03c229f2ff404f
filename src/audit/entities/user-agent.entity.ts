import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** Longer user agents are cut to this many characters before they are stored. */
export const USER_AGENT_MAX_LENGTH = 256;

/**
 * One distinct user agent text (table `user_agents`), stored once and referred to by the audit
 * rows of the requests that sent it (decision 0028). Rows are only ever added.
 */
@Entity('user_agents')
export class UserAgent {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Index('IDX_user_agents_userAgent', { unique: true })
  @Column({ type: String, length: USER_AGENT_MAX_LENGTH })
  userAgent: string;
}
