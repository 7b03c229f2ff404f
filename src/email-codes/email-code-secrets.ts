import { Injectable } from '@nestjs/common';
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { generateOpaqueToken } from '../common/crypto/opaque-token.js';
import { RandomSource } from '../common/random/random-source.js';
import { AppConfig } from '../config/app-config.js';

const KEY_LABEL = 'keygate-email-code-v1';
/** 48 bits per draw: enough for ten digits, and exact in a double. */
const DRAW_BYTES = 6;
const DRAW_RANGE = 2 ** (8 * DRAW_BYTES);

/** A new code and link for one row: the values that are mailed, and the digests that are stored. */
export interface NewEmailCode {
  readonly code: string;
  readonly codeHash: string;
  readonly token: string;
  readonly tokenHash: string;
}

/**
 * The secrets of a sign-in mail. The link's token has 256 bits, so its SHA-256 is enough (as for
 * every mailed link); a code of six digits would fall to a plain digest in a millisecond, so it
 * is stored as an HMAC under a key derived (HKDF-SHA256) from the signing secret, which the
 * database does not hold, and bound to its row, so a digest means nothing in another row.
 */
@Injectable()
export class EmailCodeSecrets {
  private readonly key: Buffer;
  private readonly codeLength: number;

  constructor(
    config: AppConfig,
    private readonly random: RandomSource,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', config.jwt.secret, '', KEY_LABEL, 32));
    this.codeLength = config.emailCode.codeLength;
  }

  /** A uniformly drawn code of EmailCode__CodeLength digits and a link token, for row `id`. */
  create(id: string): NewEmailCode {
    const code = this.drawCode();
    const { raw, hash } = generateOpaqueToken(this.random);
    return { code, codeHash: this.digest(id, code), token: raw, tokenHash: hash };
  }

  /** Whether `code` is the code of row `id`, compared in constant time. */
  matches(id: string, codeHash: string, code: string): boolean {
    const expected = Buffer.from(codeHash, 'hex');
    const presented = Buffer.from(this.digest(id, code), 'hex');
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  }

  private digest(id: string, code: string): string {
    return createHmac('sha256', this.key).update(`${id}:${code}`).digest('hex');
  }

  /** Rejection sampling: draws past the last whole multiple of 10^length would favour low codes. */
  private drawCode(): string {
    const modulus = 10 ** this.codeLength;
    const limit = DRAW_RANGE - (DRAW_RANGE % modulus);
    for (;;) {
      const draw = this.random.bytes(DRAW_BYTES).readUIntBE(0, DRAW_BYTES);
      if (draw < limit) {
        return String(draw % modulus).padStart(this.codeLength, '0');
      }
    }
  }
}
