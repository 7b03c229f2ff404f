import { Injectable, Logger, Optional } from '@nestjs/common';
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
} from '../common/errors/domain-errors.js';
import { RandomSource } from '../common/random/random-source.js';
import { internalOrigin, type RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { AdminApiActor, SigningKeyCreationReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import type { SigningKeyResponseDto } from './dto/signing-key-response.dto.js';
import { SigningKey } from './entities/signing-key.entity.js';
import {
  generateKeyMaterial,
  keyMaterialFromPem,
  UnusableKeyError,
  type AsymmetricAlgorithm,
  type KeyMaterial,
} from './key-material.js';
import { KeySet } from './key-set.js';
import type { KeyState, KeyStatus } from './key-states.js';
import { KeysMessages } from './keys.messages.js';
import { SigningKeyRepository, type SigningKeyUnit } from './signing-key.repository.js';
import { SigningKeyObserver } from './signing-key-observer.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The origin of the key set's own changes, made by an instance on its timer. */
export const KEY_SET_ORIGIN = 'keys';

/**
 * The key set's operations (list, rotate, retire, import), for the admin CLI and the admin API, and
 * the reading every instance takes at start-up and on a timer (refresh). Every change is one
 * transaction holding the key set's lock, with its audit event; generating a key happens before
 * it, never inside. A new key is published `publicationLeadMs` before it signs: every instance
 * has read it by then (Keys__RefreshIntervalSeconds), and every JWKS a resource server cached
 * before that has expired (Keys__JwksMaxAgeSeconds), the clock skew on top.
 */
@Injectable()
export class KeysService {
  private readonly logger = new Logger(KeysService.name);
  private readonly algorithm: AppConfig['keys']['signingAlgorithm'];
  readonly publicationLeadMs: number;
  private readonly rotationIntervalMs: number;

  constructor(
    private readonly repository: SigningKeyRepository,
    private readonly keySet: KeySet,
    private readonly events: AuthEvents,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    config: AppConfig,
    @Optional() private readonly observer?: SigningKeyObserver,
  ) {
    const { signingAlgorithm, jwksMaxAgeSeconds, refreshIntervalSeconds, rotationIntervalDays } =
      config.keys;
    this.algorithm = signingAlgorithm;
    this.publicationLeadMs =
      (jwksMaxAgeSeconds + refreshIntervalSeconds + config.jwt.clockSkewSeconds) * 1000;
    this.rotationIntervalMs = rotationIntervalDays * DAY_MS;
  }

  /** Every key, the configuration's secrets included, newest activation first. */
  async list(): Promise<SigningKeyResponseDto[]> {
    const rows = await this.repository.all();
    const statuses = this.keySet.statuses(rows);
    const keys = rows
      .filter((row) => row.source !== 'secret')
      .sort((a, b) => (b.activatesAt?.getTime() ?? 0) - (a.activatesAt?.getTime() ?? 0))
      .map((row) => this.listing(row, statuses.get(row.kid)));
    return [...keys, ...this.secretListings(rows)];
  }

  /**
   * Makes a key of Jwt__SigningAlgorithm and publishes it as next: it signs once the lead is over.
   * `actor` is the admin API key that asked (none for the CLI), recorded in the event.
   */
  async rotate(origin: RequestOrigin, actor?: AdminApiActor): Promise<SigningKeyResponseDto> {
    const material = await generateKeyMaterial(this.asymmetricAlgorithm());
    return this.addNext(material, 'generated', 'rotation', origin, actor);
  }

  /** Imports a PEM private key as the next key, as a rotation would make one. */
  async import(pem: string, origin: RequestOrigin): Promise<SigningKeyResponseDto> {
    const algorithm = this.asymmetricAlgorithm();
    const material = await this.materialFromPem(pem);
    if (material.algorithm !== algorithm) {
      throw new InvalidArgumentError(KeysMessages.algorithmMismatch);
    }
    return this.addNext(material, 'imported', 'import', origin);
  }

  /**
   * Retires a key at once: tokens it signed stop verifying on each instance as it next reads the
   * set. The current key is replaced in the same transaction (the next key activates now, or a new
   * one is made), so something always signs; an HS256 secret is retired by its `kid`, unless it
   * is the one that signs.
   */
  async retire(
    kid: string,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<SigningKeyResponseDto> {
    const before = await this.repository.all();
    const wasCurrent = this.keySet.statuses(before).get(kid)?.state === 'current';
    const successor =
      wasCurrent && this.algorithm !== 'HS256' ? await generateKeyMaterial(this.algorithm) : null;
    const { retired, rows } = await this.repository.changing(async (unit) => {
      const now = this.clock.now();
      const current = await unit.all();
      const row = current.find((candidate) => candidate.kid === kid);
      const retiredRow =
        row === undefined
          ? await this.retireSecret(unit, kid, now, origin, actor)
          : await this.retireKey(unit, row, current, now, successor, origin, actor);
      return { retired: retiredRow, rows: await unit.all() };
    });
    this.keySet.load(rows);
    return this.listing(retired, this.keySet.statuses(rows).get(retired.kid));
  }

  /**
   * Reads the set again. An instance that signs with it first makes sure it can: a set without a
   * current key gets one (the next key activates now, or a new key is made), and with
   * Keys__RotationIntervalDays a key that old gets a successor, published as next.
   */
  async refresh(): Promise<void> {
    let rows = await this.repository.all();
    if (this.algorithm !== 'HS256' && this.maintenanceDue(rows)) {
      rows = await this.maintain();
    }
    this.keySet.load(rows);
  }

  /**
   * The first reading, before the instance serves: refresh, then refuse to start when the key
   * that signs cannot be opened (Keys__EncryptionKeys lacks the key that sealed it).
   */
  async start(): Promise<void> {
    await this.refresh();
    const signer = this.keySet.signer();
    if (signer === null && this.algorithm !== 'HS256') {
      throw new Error('The key set has no current key to sign with');
    }
    this.observer?.watch(() => this.keySet.currentKey());
  }

  private asymmetricAlgorithm(): AsymmetricAlgorithm {
    if (this.algorithm === 'HS256') {
      throw new InvalidArgumentError(KeysMessages.symmetricAlgorithm);
    }
    return this.algorithm;
  }

  private async materialFromPem(pem: string): Promise<KeyMaterial> {
    try {
      return await keyMaterialFromPem(pem);
    } catch (error: unknown) {
      if (!(error instanceof UnusableKeyError)) {
        throw error;
      }
      switch (error.reason) {
        case 'not_a_private_key':
          throw new InvalidArgumentError(KeysMessages.notAPrivateKey);
        case 'unsupported_type':
          throw new InvalidArgumentError(KeysMessages.unsupportedKey);
        case 'rsa_too_short':
          throw new InvalidArgumentError(KeysMessages.rsaTooShort);
      }
    }
  }

  private async addNext(
    material: KeyMaterial,
    source: 'generated' | 'imported',
    reason: SigningKeyCreationReason,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<SigningKeyResponseDto> {
    const { row, rows } = await this.repository.changing(async (unit) => {
      const now = this.clock.now();
      const current = await unit.all();
      if (current.some((candidate) => candidate.kid === material.kid)) {
        throw new ConflictError(KeysMessages.alreadyExists);
      }
      const statuses = this.keySet.statuses(current);
      if (current.some((candidate) => statuses.get(candidate.kid)?.state === 'next')) {
        throw new ConflictError(KeysMessages.nextKeyWaiting);
      }
      const added = await this.insert(
        unit,
        material,
        source,
        reason,
        now,
        this.publishedAt(now),
        origin,
        actor,
      );
      return { row: added, rows: await unit.all() };
    });
    this.keySet.load(rows);
    this.logger.log(
      `Signing key ${row.kid} (${row.algorithm}) added; it signs from ${row.activatesAt?.toISOString()}`,
    );
    return this.listing(row, this.keySet.statuses(rows).get(row.kid));
  }

  private publishedAt(now: Date): Date {
    return new Date(now.getTime() + this.publicationLeadMs);
  }

  private async insert(
    unit: SigningKeyUnit,
    material: KeyMaterial,
    source: 'generated' | 'imported',
    reason: SigningKeyCreationReason,
    now: Date,
    activatesAt: Date,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<SigningKey> {
    const row = Object.assign(new SigningKey(), {
      kid: material.kid,
      algorithm: material.algorithm,
      source,
      publicKey: JSON.stringify(material.publicJwk),
      privateKey: this.keySet.seal(material.kid, material.privatePem),
      createdAt: now,
      activatesAt,
      retiredAt: null,
    });
    await unit.insert(row);
    await this.events.record(
      unit.manager,
      {
        type: 'signing_key_created',
        userId: null,
        kid: row.kid,
        algorithm: row.algorithm,
        source,
        reason,
        activatesAt,
        ...(actor === undefined ? {} : { actor }),
      },
      origin,
    );
    return row;
  }

  private async retireSecret(
    unit: SigningKeyUnit,
    kid: string,
    now: Date,
    origin: RequestOrigin,
    actor: AdminApiActor | undefined,
  ): Promise<SigningKey> {
    const secretKids = this.keySet.secretKids;
    if (!secretKids.includes(kid)) {
      throw new NotFoundError(KeysMessages.notFound);
    }
    if (this.algorithm === 'HS256' && kid === secretKids[0]) {
      throw new ConflictError(KeysMessages.secretSigns);
    }
    const row = Object.assign(new SigningKey(), {
      kid,
      algorithm: 'HS256',
      source: 'secret',
      publicKey: null,
      privateKey: null,
      createdAt: now,
      activatesAt: null,
      retiredAt: now,
    });
    await unit.insert(row);
    await this.recordRetired(unit, row, 'previous', origin, actor);
    return row;
  }

  private async retireKey(
    unit: SigningKeyUnit,
    row: SigningKey,
    rows: readonly SigningKey[],
    now: Date,
    successor: KeyMaterial | null,
    origin: RequestOrigin,
    actor: AdminApiActor | undefined,
  ): Promise<SigningKey> {
    if (row.retiredAt !== null) {
      throw new ConflictError(KeysMessages.alreadyRetired);
    }
    const statuses = this.keySet.statuses(rows);
    const state = statuses.get(row.kid)?.state ?? 'retired';
    await unit.retire(row.kid, now);
    if (state === 'current' && this.algorithm !== 'HS256') {
      await this.replaceCurrent(unit, rows, statuses, now, successor, origin);
    }
    await this.recordRetired(unit, row, state, origin, actor);
    return Object.assign(new SigningKey(), row, { retiredAt: now });
  }

  /** The set lost its current key: the earliest next key activates now, or a new key is made. */
  private async replaceCurrent(
    unit: SigningKeyUnit,
    rows: readonly SigningKey[],
    statuses: ReadonlyMap<string, KeyStatus>,
    now: Date,
    material: KeyMaterial | null,
    origin: RequestOrigin,
  ): Promise<void> {
    const next = rows
      .filter((row) => statuses.get(row.kid)?.state === 'next')
      .sort((a, b) => (a.activatesAt?.getTime() ?? 0) - (b.activatesAt?.getTime() ?? 0))[0];
    if (next !== undefined && next.activatesAt !== null) {
      await unit.activate(next.kid, now);
      await this.events.record(
        unit.manager,
        {
          type: 'signing_key_activated',
          userId: null,
          kid: next.kid,
          algorithm: next.algorithm,
          scheduledFor: next.activatesAt,
        },
        origin,
      );
      return;
    }
    if (material === null) {
      // Another process changed the set between the reading and the transaction.
      throw new Error('The key set changed meanwhile; run the command again');
    }
    await this.insert(unit, material, 'generated', 'no_current_key', now, now, origin);
  }

  private async recordRetired(
    unit: SigningKeyUnit,
    row: SigningKey,
    previousState: KeyState,
    origin: RequestOrigin,
    actor: AdminApiActor | undefined,
  ): Promise<void> {
    await this.events.record(
      unit.manager,
      {
        type: 'signing_key_retired',
        userId: null,
        kid: row.kid,
        algorithm: row.algorithm,
        previousState,
        ...(actor === undefined ? {} : { actor }),
      },
      origin,
    );
    this.logger.warn(
      `Signing key ${row.kid} (${row.algorithm}) retired: its tokens stop verifying`,
    );
  }

  /** Whether the set needs a current key, or an automatic rotation is due. */
  private maintenanceDue(rows: readonly SigningKey[]): boolean {
    const statuses = this.keySet.statuses(rows);
    const current = rows.find((row) => statuses.get(row.kid)?.state === 'current');
    if (current === undefined) {
      return true;
    }
    return (
      this.rotationIntervalMs > 0 &&
      current.createdAt.getTime() + this.rotationIntervalMs <= this.clock.now().getTime() &&
      !rows.some((row) => statuses.get(row.kid)?.state === 'next')
    );
  }

  /** See refresh(): decided again inside the key set's lock, as another instance may have acted. */
  private async maintain(): Promise<SigningKey[]> {
    const material = await generateKeyMaterial(this.asymmetricAlgorithm());
    const origin = internalOrigin(KEY_SET_ORIGIN, this.random);
    return this.repository.changing(async (unit) => {
      const rows = await unit.all();
      if (this.maintenanceDue(rows)) {
        const now = this.clock.now();
        const statuses = this.keySet.statuses(rows);
        if (!rows.some((row) => statuses.get(row.kid)?.state === 'current')) {
          await this.replaceCurrent(unit, rows, statuses, now, material, origin);
        } else {
          await this.insert(
            unit,
            material,
            'generated',
            'automatic_rotation',
            now,
            this.publishedAt(now),
            origin,
          );
        }
      }
      return unit.all();
    });
  }

  private listing(row: SigningKey, status: KeyStatus | undefined): SigningKeyResponseDto {
    let state: KeyState = status?.state ?? 'retired';
    // Under HS256 the secret signs: a key of the set only verifies the tokens it signed before.
    if (state === 'current' && this.algorithm === 'HS256') {
      state = 'previous';
    }
    return {
      kid: row.kid,
      algorithm: row.algorithm,
      source: row.source,
      state,
      createdAt: row.source === 'secret' ? null : row.createdAt.toISOString(),
      activatesAt: row.activatesAt?.toISOString() ?? null,
      retiredAt: row.retiredAt?.toISOString() ?? null,
    };
  }

  /** Jwt__SecretKey and Jwt__PreviousSecretKeys, by kid, with whether each was retired. */
  private secretListings(rows: readonly SigningKey[]): SigningKeyResponseDto[] {
    return this.keySet.secretKids.map((kid, index) => {
      const marker = rows.find((row) => row.kid === kid && row.source === 'secret');
      const state: KeyState =
        marker !== undefined
          ? 'retired'
          : index === 0 && this.algorithm === 'HS256'
            ? 'current'
            : 'previous';
      return {
        kid,
        algorithm: 'HS256',
        source: 'secret',
        state,
        createdAt: null,
        activatesAt: null,
        retiredAt: marker?.retiredAt?.toISOString() ?? null,
      };
    });
  }
}
