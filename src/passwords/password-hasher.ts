import { Injectable, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { pbkdf2, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { ConcurrencyLimit } from '../common/concurrency/concurrency-limit.js';
import { AppConfig } from '../config/app-config.js';
import { PasswordHashObserver, type PasswordHashOperation } from './password-hash-observer.js';
import { RandomSource } from '../common/random/random-source.js';

const pbkdf2Async = promisify(pbkdf2);

const ALGORITHM = 'pbkdf2-sha256';
const DIGEST = 'sha256';
const SALT_BYTES = 16;
const KEY_BYTES = 32;

/**
 * What an account with no password stores (one made through another identity provider, or taken
 * over from whoever set the password before the address was proven): no password matches it, and
 * checking one against it costs what a real check costs. A password reset sets a real one.
 */
export const NO_PASSWORD_HASH = '!';

/** Whether the account has a password at all. */
export function hasPassword(stored: string): boolean {
  return stored !== NO_PASSWORD_HASH;
}

interface ParsedHash {
  readonly iterations: number;
  readonly salt: Buffer;
  readonly key: Buffer;
}

/**
 * PBKDF2-HMAC-SHA256 in a self-describing format, `pbkdf2-sha256$<iterations>$<salt>$<key>`
 * (base64), so the cost can be raised later without invalidating stored hashes.
 * Always the asynchronous call: hashing runs on the libuv pool, never on the event loop. At most
 * `PasswordHashing__Concurrency` hashes run at once and the others queue here, so a login flood
 * can neither fill the pool nor take every core from the event loop.
 */
@Injectable()
export class PasswordHasher implements OnApplicationBootstrap {
  private readonly iterations: number;
  private readonly slots: ConcurrencyLimit;
  private dummyHash: Promise<string> | undefined;

  constructor(
    config: AppConfig,
    private readonly random: RandomSource,
    @Optional() private readonly observer?: PasswordHashObserver,
  ) {
    this.iterations = config.passwordHashing.iterations;
    this.slots = new ConcurrencyLimit(config.passwordHashing.concurrency);
  }

  /** Prepares the dummy hash in the background, so no login request pays for it. */
  onApplicationBootstrap(): void {
    this.dummyHash ??= this.hash(this.random.bytes(SALT_BYTES).toString('base64'));
  }

  async hash(password: string): Promise<string> {
    const salt = this.random.bytes(SALT_BYTES);
    const key = await this.derive('hash', password, salt, this.iterations);
    return [ALGORITHM, this.iterations, salt.toString('base64'), key.toString('base64')].join('$');
  }

  /** Constant-time check; a stored value in an unknown format never matches. */
  async verify(password: string, stored: string): Promise<boolean> {
    const parsed = parse(stored);
    if (parsed === undefined) {
      // NO_PASSWORD_HASH among them: the same time as a real check, so it tells nothing.
      await this.verifyAgainstDummy(password);
      return false;
    }
    const key = await this.derive('verify', password, parsed.salt, parsed.iterations);
    return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
  }

  /**
   * Spends the same time as verifying a real user's password, so an unknown e-mail cannot be
   * told from a wrong password by timing.
   */
  async verifyAgainstDummy(password: string): Promise<void> {
    this.dummyHash ??= this.hash(this.random.bytes(SALT_BYTES).toString('base64'));
    await this.verify(password, await this.dummyHash);
  }

  /** True when the stored hash was made with a lower cost than the configured one. */
  needsRehash(stored: string): boolean {
    const parsed = parse(stored);
    return parsed === undefined || parsed.iterations < this.iterations;
  }

  private async derive(
    operation: PasswordHashOperation,
    password: string,
    salt: Buffer,
    iterations: number,
  ): Promise<Buffer> {
    return this.slots.run(async () => {
      if (this.observer === undefined) {
        return derive(password, salt, iterations);
      }
      // Timed once it has its turn: the histogram shows what a hash costs, not the queue.
      const started = performance.now();
      try {
        return await derive(password, salt, iterations);
      } finally {
        this.observer.observe(operation, (performance.now() - started) / 1_000);
      }
    });
  }
}

function derive(password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  return pbkdf2Async(Buffer.from(password, 'utf8'), salt, iterations, KEY_BYTES, DIGEST);
}

function parse(stored: string): ParsedHash | undefined {
  const parts = stored.split('$');
  if (parts.length !== 4 || parts[0] !== ALGORITHM) {
    return undefined;
  }
  const iterations = Number(parts[1]);
  if (!Number.isSafeInteger(iterations) || iterations < 1) {
    return undefined;
  }
  return {
    iterations,
    salt: Buffer.from(parts[2], 'base64'),
    key: Buffer.from(parts[3], 'base64'),
  };
}
