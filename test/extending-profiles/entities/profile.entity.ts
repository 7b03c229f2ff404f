import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A member's profile: one row per account, made when the account registers. */
@Entity('profiles')
export class Profile {
  /** The account's id; the row goes with the account (ON DELETE CASCADE). */
  @PrimaryColumn({ type: String, length: 36 })
  userId: string;

  @Column({ type: String, length: 100, nullable: true })
  displayName: string | null;

  @Column({ type: Date })
  createdAt: Date;
}
