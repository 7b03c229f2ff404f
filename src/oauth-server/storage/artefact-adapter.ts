import { hash } from 'node:crypto';
import type { Adapter, AdapterPayload, errors } from 'oidc-provider';
import type { Clock } from '../../common/time/clock.js';
import type { OAuthArtefact } from '../entities/oauth-artefact.entity.js';
import type { OAuthArtefactRepository } from './oauth-artefact.repository.js';

/** SHA-256, hex: how ids, uids and user codes are stored and looked up. */
export function artefactDigest(value: string): string {
  return hash('sha256', value, 'hex');
}

/** What an alias row of a device code holds instead of a payload (see findByUserCode). */
interface DeviceCodeAlias {
  readonly aliasOf: string;
}

/**
 * The protocol library's storage of one model (`AuthorizationCode`, `RefreshToken`, `Session`,
 * ...) over `oauth_artefacts`. The id of a code, a token or a session is the bearer secret the
 * library hands out, so a row is keyed by its digest and the id is taken out of the payload; the
 * library always looks a row up by the id and gets it back in `jti`. The same goes for copies of
 * secrets inside payloads: a device flow's user code, and the session cookie an interaction
 * remembers (which the library writes but never reads back).
 */
export class ArtefactAdapter implements Adapter {
  constructor(
    private readonly kind: string,
    private readonly rows: OAuthArtefactRepository,
    private readonly clock: Clock,
    /** The library's `invalid_grant` (passed in: the library is loaded only when enabled). */
    private readonly InvalidGrant: typeof errors.InvalidGrant,
    /** Told when a use lost the race to another (a reuse the library does not see). */
    private readonly onLostRace: (kind: string) => void = () => undefined,
    /** The library's route of the request in progress (`token`, `code_verification`, ...). */
    private readonly currentRoute: () => string | undefined = () => undefined,
    /** A new random id, as long as the library's (RandomSource). */
    private readonly newId: () => string = () => {
      throw new Error('no source of ids for device code aliases');
    },
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const { jti: _id, userCode, ...stored } = payload;
    // A device code found by its user code is saved through its alias: to its own row.
    const idDigest = (await this.aliasTarget(id)) ?? artefactDigest(id);
    const session: unknown = stored.session;
    if (typeof session === 'object' && session !== null && 'cookie' in session) {
      const { cookie: _cookie, ...rest } = session as Record<string, unknown>;
      (stored as Record<string, unknown>).session = rest;
    }
    const uid = this.kind === 'Session' && typeof stored.uid === 'string' ? stored.uid : null;
    await this.rows.save({
      kind: this.kind,
      idDigest,
      payload: JSON.stringify(stored),
      grantId: typeof stored.grantId === 'string' ? stored.grantId : null,
      uidDigest: uid === null ? null : artefactDigest(uid),
      userCodeDigest: typeof userCode === 'string' ? artefactDigest(userCode) : null,
      expiresAt:
        expiresIn === undefined ? null : new Date(this.clock.now().getTime() + expiresIn * 1000),
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const row = await this.rows.byDigest(this.kind, artefactDigest(id));
    const alias = aliasOf(this.kind, row);
    if (alias === null) {
      return this.payloadOf(row, id);
    }
    // An alias leads to its device code on the pages of the flow, never at the token endpoint:
    // it is kept in the interaction's row, and must not be a way to redeem the device code.
    if (this.currentRoute() === 'token') {
      return undefined;
    }
    return this.payloadOf(await this.rows.byDigest(this.kind, alias.aliasOf), id);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const row = await this.rows.byUidDigest(this.kind, artefactDigest(uid));
    // The library finds the session by its uid, then reads it again by its id: the id is not
    // known here, and a session found this way is only used to end it (RP-initiated logout).
    return row === null ? undefined : this.payloadOf(row, undefined);
  }

  /**
   * The device code a person typed the user code of. The library looks it up again and saves it
   * by the id it gets here (`jti`), but the device code itself is not stored, only its digest:
   * it gets a new random id instead, an alias, whose row leads to the device code's row (find,
   * upsert) on the flow's pages and nowhere else.
   */
  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const row = await this.rows.byUserCodeDigest(this.kind, artefactDigest(userCode));
    const payload = this.payloadOf(row, undefined);
    if (row === null || payload === undefined) {
      return undefined;
    }
    const aliasId = this.newId();
    const alias: DeviceCodeAlias = { aliasOf: row.idDigest };
    await this.rows.save({
      kind: this.kind,
      idDigest: artefactDigest(aliasId),
      payload: JSON.stringify(alias),
      grantId: null,
      uidDigest: null,
      userCodeDigest: null,
      expiresAt: row.expiresAt,
    });
    return { ...payload, jti: aliasId, userCode };
  }

  /**
   * Marks a code or a refresh token used. The library reads `consumed` first and revokes the
   * grant when it is set, but two redemptions at once both read it unset: the conditional update
   * lets one through, and the other is refused as a reuse (its grant revoked, as the library
   * does for a reuse it sees).
   */
  async consume(id: string): Promise<void> {
    const idDigest = artefactDigest(id);
    if (await this.rows.consume(this.kind, idDigest, this.clock.now())) {
      return;
    }
    const row = await this.rows.byDigest(this.kind, idDigest);
    if (row?.grantId !== null && row?.grantId !== undefined) {
      // As the library revokes on a reuse it sees: the grant's tokens and the grant itself.
      await this.rows.deleteGrant(row.grantId);
      await this.rows.delete('Grant', artefactDigest(row.grantId));
    }
    this.onLostRace(this.kind);
    throw new this.InvalidGrant('grant request is invalid');
  }

  async destroy(id: string): Promise<void> {
    await this.rows.delete(this.kind, artefactDigest(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.rows.deleteGrant(grantId);
  }

  /** The row digest an alias id leads to; null for any other id. */
  private async aliasTarget(id: string): Promise<string | null> {
    if (this.kind !== 'DeviceCode') {
      return null;
    }
    return (
      aliasOf(this.kind, await this.rows.byDigest(this.kind, artefactDigest(id)))?.aliasOf ?? null
    );
  }

  private payloadOf(row: OAuthArtefact | null, id: string | undefined): AdapterPayload | undefined {
    if (row === null) {
      return undefined;
    }
    // An expired device code is still given to the library, which checks its expiry itself:
    // the polling device is then told `expired_token` (RFC 8628 §3.5), not that it never was.
    // The cleanup deletes it with the other expired rows.
    if (
      this.kind !== 'DeviceCode' &&
      row.expiresAt !== null &&
      row.expiresAt.getTime() <= this.clock.now().getTime()
    ) {
      return undefined;
    }
    const payload = JSON.parse(row.payload) as AdapterPayload;
    return {
      ...payload,
      ...(id === undefined ? {} : { jti: id }),
      ...(row.consumedAt === null ? {} : { consumed: Math.floor(row.consumedAt.getTime() / 1000) }),
    };
  }
}

/** The alias a device code row holds, or null for any other row. */
function aliasOf(kind: string, row: OAuthArtefact | null): DeviceCodeAlias | null {
  if (kind !== 'DeviceCode' || row === null) {
    return null;
  }
  const payload = JSON.parse(row.payload) as Partial<DeviceCodeAlias>;
  return typeof payload.aliasOf === 'string' ? { aliasOf: payload.aliasOf } : null;
}
