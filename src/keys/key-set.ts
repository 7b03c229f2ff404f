import { Injectable, Logger } from '@nestjs/common';
import type { KeyObject } from 'node:crypto';
import { SealedBox } from '../common/crypto/sealed-box.js';
import { jwtKey } from '../common/jwt/jwt-key.js';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { SigningAlgorithm } from '../config/environment-variables.js';
import type { JwkResponseDto, JwksResponseDto } from './dto/jwks-response.dto.js';
import type { SigningKey } from './entities/signing-key.entity.js';
import {
  privateKeyOf,
  publicKeyOf,
  type AsymmetricAlgorithm,
  type PublicJwk,
} from './key-material.js';
import { keyStates, nextChangeAfter, type KeyStatus } from './key-states.js';

/** A key that verifies tokens: only tokens whose `alg` is its algorithm. */
export interface VerificationKey {
  readonly kid: string;
  readonly algorithm: SigningAlgorithm;
  /** A secret KeyObject for HS256, a public one otherwise. */
  readonly key: KeyObject;
}

/** The key new access tokens are signed with, when it is not the HS256 secret. */
export interface AsymmetricSigner {
  readonly kid: string;
  readonly algorithm: AsymmetricAlgorithm;
  readonly privateKey: KeyObject;
}

interface Entry extends VerificationKey {
  /** Tokens of the key verify before this instant (ms); Infinity for the secrets. */
  readonly verifiesUntil: number;
}

/** One reading of the table, with what follows from it until `validUntil` (ms). */
interface Snapshot {
  readonly validUntil: number;
  readonly byKid: ReadonlyMap<string, Entry>;
  /** The newest activated key, unless it was retired: the one that signs. */
  readonly current: SigningKey | undefined;
  /** The JWKS document. */
  readonly jwks: JwksResponseDto;
}

/**
 * The key set as this instance knows it: the HS256 secrets of the configuration and the keys of
 * `signing_keys`, as last read (KeysService reads it at start-up and on a timer). The guard asks
 * it for the key a token's `kid` names, the token signer for the key that signs, the JWKS route
 * for the public keys. What follows from the rows and the clock (the states) is worked out once
 * per reading and again only when the next state change is due, so a request pays a map lookup.
 */
@Injectable()
export class KeySet {
  private readonly logger = new Logger(KeySet.name);
  private readonly secrets: ReadonlyMap<string, KeyObject>;
  private readonly currentSecret: { readonly kid: string; readonly key: KeyObject };
  private readonly box: SealedBox;
  private readonly tokenLifetimeMs: number;
  private readonly privateKeys = new Map<string, KeyObject>();
  private rows: readonly SigningKey[] = [];
  private snapshot: Snapshot | undefined;
  private hasLoaded = false;

  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
    random: RandomSource,
  ) {
    const { secret, previousSecrets, accessTokenExpiryMinutes, clockSkewSeconds } = config.jwt;
    const current = jwtKey(secret);
    this.currentSecret = current;
    const secrets = new Map<string, KeyObject>();
    for (const { kid, key } of [current, ...previousSecrets.map(jwtKey)]) {
      if (!secrets.has(kid)) {
        secrets.set(kid, key);
      }
    }
    this.secrets = secrets;
    this.box = new SealedBox(config.keys.encryptionKeys, random);
    this.tokenLifetimeMs = (accessTokenExpiryMinutes * 60 + clockSkewSeconds) * 1000;
  }

  /** True once the table was read: until then only the configuration's secrets are known. */
  get isLoaded(): boolean {
    return this.hasLoaded;
  }

  /** A token's lifetime plus the clock skew: how long a key verifies after it stopped signing. */
  get verificationWindowMs(): number {
    return this.tokenLifetimeMs;
  }

  /** The kid Keygate writes for each configured secret, Jwt__SecretKey's first. */
  get secretKids(): readonly string[] {
    return [...this.secrets.keys()];
  }

  /** Takes a fresh reading of the table. */
  load(rows: readonly SigningKey[]): void {
    this.rows = rows;
    this.snapshot = undefined;
    this.hasLoaded = true;
    for (const kid of this.privateKeys.keys()) {
      if (!rows.some((row) => row.kid === kid && row.retiredAt === null)) {
        this.privateKeys.delete(kid);
      }
    }
  }

  /**
   * The key for a token's header, or undefined: an unknown or retired `kid`, or a kid that is not
   * a string. A token without `kid` was signed before key ids existed, with the secret that was
   * current then: the current secret, unless it was retired.
   */
  verificationKey(kid: unknown): VerificationKey | undefined {
    const name = kid === undefined ? this.currentSecret.kid : kid;
    if (typeof name !== 'string') {
      return undefined;
    }
    const now = this.clock.now().getTime();
    const entry = this.state(now).byKid.get(name);
    return entry !== undefined && now < entry.verifiesUntil ? entry : undefined;
  }

  /** Whether tokens of `kid` (as verificationKey names it) still verify. */
  accepts(kid: string): boolean {
    return this.verificationKey(kid) !== undefined;
  }

  /**
   * The key that signs new access tokens, or null when the HS256 secret does: under HS256, and
   * under an asymmetric algorithm while the set has no current key (KeysService makes one).
   */
  signer(): AsymmetricSigner | null {
    if (this.config.keys.signingAlgorithm === 'HS256') {
      return null;
    }
    const current = this.state().current;
    if (current === undefined) {
      return null;
    }
    return {
      kid: current.kid,
      algorithm: current.algorithm as AsymmetricAlgorithm,
      privateKey: this.privateKeyOf(current),
    };
  }

  /** The key that signs, its algorithm and when it was made; null while the HS256 secret signs. */
  currentKey(): { readonly algorithm: string; readonly createdAt: Date } | null {
    const current =
      this.config.keys.signingAlgorithm === 'HS256' ? undefined : this.state().current;
    return current === undefined
      ? null
      : { algorithm: current.algorithm, createdAt: current.createdAt };
  }

  /** The JWKS document (RFC 7517): the public keys of the next, current and previous keys. */
  jwks(): JwksResponseDto {
    return this.state().jwks;
  }

  /** The states of the table's keys at the clock's now. */
  statuses(rows: readonly SigningKey[] = this.rows): Map<string, KeyStatus> {
    return keyStates(rows, this.clock.now().getTime(), this.tokenLifetimeMs);
  }

  /** True when the sealed private key of `row` opens with Keys__EncryptionKeys. */
  opens(row: SigningKey): boolean {
    return row.privateKey !== null && this.box.open(row.kid, row.privateKey) !== null;
  }

  /** Seals a private key for the row of `kid`. */
  seal(kid: string, privatePem: string): string {
    return this.box.seal(kid, privatePem);
  }

  private privateKeyOf(row: SigningKey): KeyObject {
    let key = this.privateKeys.get(row.kid);
    if (key === undefined) {
      const pem = row.privateKey === null ? null : this.box.open(row.kid, row.privateKey);
      if (pem === null) {
        // Names the key by its public id only; start-up refuses this case, see KeysService.
        throw new Error(
          `The private key of signing key ${row.kid} does not open with Keys__EncryptionKeys`,
        );
      }
      key = privateKeyOf(pem);
      this.privateKeys.set(row.kid, key);
    }
    return key;
  }

  private state(now = this.clock.now().getTime()): Snapshot {
    if (this.snapshot === undefined || now >= this.snapshot.validUntil) {
      this.snapshot = this.build(now);
    }
    return this.snapshot;
  }

  private build(now: number): Snapshot {
    const statuses = keyStates(this.rows, now, this.tokenLifetimeMs);
    const byKid = new Map<string, Entry>();
    for (const [kid, key] of this.secrets) {
      if (statuses.get(kid) === undefined) {
        byKid.set(kid, { kid, algorithm: 'HS256', key, verifiesUntil: Infinity });
      }
    }
    const published: JwkResponseDto[] = [];
    let current: SigningKey | undefined;
    for (const row of this.rows) {
      const status = statuses.get(row.kid);
      if (row.publicKey === null || status === undefined || status.state === 'retired') {
        continue;
      }
      if (status.state === 'current') {
        current = row;
      }
      const jwk = JSON.parse(row.publicKey) as PublicJwk;
      byKid.set(row.kid, {
        kid: row.kid,
        algorithm: row.algorithm as AsymmetricAlgorithm,
        key: this.publicKey(row.kid, jwk),
        verifiesUntil: status.verifiesUntil,
      });
      published.push({ ...jwk, kid: row.kid, alg: row.algorithm, use: 'sig' });
    }
    return {
      validUntil: nextChangeAfter(this.rows, statuses, now),
      byKid,
      current,
      jwks: { keys: published },
    };
  }

  private readonly publicKeys = new Map<string, KeyObject>();

  private publicKey(kid: string, jwk: PublicJwk): KeyObject {
    let key = this.publicKeys.get(kid);
    if (key === undefined) {
      key = publicKeyOf(jwk);
      this.publicKeys.set(kid, key);
    }
    return key;
  }

  /** Logged by KeysService when a reading fails; the last good reading stays in use. */
  reportStaleReading(error: unknown): void {
    this.logger.error(
      `The key set could not be read again; the last reading stays in use: ${
        error instanceof Error ? error.message : String(error)
      }`,
    );
  }
}
