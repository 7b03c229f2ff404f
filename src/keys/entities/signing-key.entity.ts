import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Where a key came from: made by Keygate, imported from PEM, or the HS256 secret of a `kid`. */
export const KEY_SOURCES = ['generated', 'imported', 'secret'] as const;
export type KeySource = (typeof KEY_SOURCES)[number];

/**
 * One key of the key set. A key's state is not stored: it follows from these instants and the
 * clock (next before `activatesAt`, then current until a later key activates, then previous for a
 * token's lifetime, then retired), so every instance reading the table agrees on it without
 * being told. `retiredAt` is an operator's retirement, effective at once. A row of source
 * `secret` carries no key at all: it only records that the HS256 secret with that `kid` was
 * retired.
 */
@Entity('signing_keys')
export class SigningKey {
  /** RFC 7638 thumbprint of the public key; for a secret, the `kid` Keygate writes for it. */
  @PrimaryColumn({ type: String, length: 64 })
  kid: string;

  /** The JWS `alg` the key signs with, and the only one it verifies: ES256, EdDSA, RS256, HS256. */
  @Column({ type: String, length: 8 })
  algorithm: string;

  @Column({ type: String, length: 16 })
  source: KeySource;

  /** The public JWK's key members as JSON (no `d`, no private member); null for a secret. */
  @Column({ type: 'text', nullable: true })
  publicKey: string | null;

  /** The PKCS#8 PEM of the private key, sealed (SealedBox, the kid as associated data). */
  @Column({ type: 'text', nullable: true })
  privateKey: string | null;

  @Column({ type: Date })
  createdAt: Date;

  /** When it starts signing; null for a secret. */
  @Column({ type: Date, nullable: true })
  activatesAt: Date | null;

  /** When an operator retired it; null while it has not been. */
  @Column({ type: Date, nullable: true })
  retiredAt: Date | null;
}
