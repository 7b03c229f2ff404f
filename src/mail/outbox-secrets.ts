import { Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { jwtKey } from '../common/jwt/jwt-key.js';
import { AppConfig } from '../config/app-config.js';
import { RandomSource } from '../common/random/random-source.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const FORMAT = 'v1';
const KEY_LABEL = 'keygate-mail-outbox-v1';

/**
 * Seals the token a queued mail carries, so the outbox never holds a usable bearer secret: a copy
 * of the database without the signing secret cannot open it. AES-256-GCM under a key derived
 * (HKDF-SHA256) from the signing secret; the sealed text names that secret by its `kid`, so a
 * mail queued before a rotation of the secret still opens while the old one is among
 * Jwt__PreviousSecretKeys.
 */
@Injectable()
export class OutboxSecrets {
  private readonly current: { readonly kid: string; readonly key: Buffer };
  private readonly byKid = new Map<string, Buffer>();

  constructor(
    config: AppConfig,
    private readonly random: RandomSource,
  ) {
    const keys = [config.jwt.secret, ...config.jwt.previousSecrets].map((secret) => ({
      kid: jwtKey(secret).kid,
      key: Buffer.from(hkdfSync('sha256', secret, '', KEY_LABEL, 32)),
    }));
    this.current = keys[0];
    for (const { kid, key } of keys) {
      if (!this.byKid.has(kid)) {
        this.byKid.set(kid, key);
      }
    }
  }

  seal(plain: string): string {
    const iv = this.random.bytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.current.key, iv);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [FORMAT, this.current.kid, iv, cipher.getAuthTag(), sealed]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The plain text, or null when the secret that sealed it is no longer configured, or it was altered. */
  open(sealed: string): string | null {
    const [format, kid, iv, tag, text, ...rest] = sealed.split('.');
    const key = kid === undefined ? undefined : this.byKid.get(kid);
    if (format !== FORMAT || key === undefined || rest.length > 0) {
      return null;
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv ?? '', 'base64url'));
      decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(text ?? '', 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      return null;
    }
  }
}
