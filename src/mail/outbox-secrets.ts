import { Injectable } from '@nestjs/common';
import { hkdfSync } from 'node:crypto';
import { SealedBox } from '../common/crypto/sealed-box.js';
import { jwtKey } from '../common/jwt/jwt-key.js';
import { AppConfig } from '../config/app-config.js';
import { RandomSource } from '../common/random/random-source.js';

const KEY_LABEL = 'keygate-mail-outbox-v1';
/**
 * A queued mail's token is bound to no row: mails sealed before SealedBox existed carried no
 * associated data, and to AES-GCM an empty one is no associated data, so they still open.
 */
const UNBOUND = '';

/**
 * Seals the token a queued mail carries, so the outbox never holds a usable bearer secret: a copy
 * of the database without the signing secret cannot open it. AES-256-GCM (SealedBox) under a key
 * derived (HKDF-SHA256) from the signing secret; the sealed text names that secret by its `kid`,
 * so a mail queued before a rotation of the secret still opens while the old one is among
 * Jwt__PreviousSecretKeys.
 */
@Injectable()
export class OutboxSecrets {
  private readonly box: SealedBox;

  constructor(config: AppConfig, random: RandomSource) {
    const keys = [config.jwt.secret, ...config.jwt.previousSecrets].map((secret) => ({
      id: jwtKey(secret).kid,
      key: Buffer.from(hkdfSync('sha256', secret, '', KEY_LABEL, 32)),
    }));
    this.box = new SealedBox(
      keys.filter((key, i) => keys.findIndex((other) => other.id === key.id) === i),
      random,
    );
  }

  seal(plain: string): string {
    return this.box.seal(UNBOUND, plain);
  }

  /** The plain text, or null when the secret that sealed it is no longer configured, or it was altered. */
  open(sealed: string): string | null {
    return this.box.open(UNBOUND, sealed);
  }
}
