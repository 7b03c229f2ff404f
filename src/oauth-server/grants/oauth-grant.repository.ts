import { Injectable } from '@nestjs/common';
import { In, type EntityManager } from 'typeorm';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { OAuthArtefact } from '../entities/oauth-artefact.entity.js';
import { GRANT_KIND, grantOwnerDigest } from '../storage/artefact-adapter.js';

/** A stored grant (the protocol library's `Grant` model) as the account's listing reads it. */
export interface StoredGrant {
  readonly grantId: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly grantedAt: Date;
  readonly expiresAt: Date | null;
}

/**
 * The queries on the grants in `oauth_artefacts`: a grant row carries its own id in `grantId`
 * and the digest of its account id in `uidDigest` (ArtefactAdapter), so an account's grants are
 * found without reading every payload, and deleting by `grantId` removes the grant with its
 * codes and tokens.
 */
@Injectable()
export class OAuthGrantRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The account's live grants (any client), oldest first. */
  async ofAccount(accountId: string, now: Date): Promise<StoredGrant[]> {
    const rows = await this.unitOfWork.run((m) =>
      m.find(OAuthArtefact, {
        where: { kind: GRANT_KIND, uidDigest: grantOwnerDigest(accountId) },
      }),
    );
    return rows
      .filter((row) => row.grantId !== null && (row.expiresAt === null || row.expiresAt > now))
      .flatMap((row) => grantOf(row, accountId))
      .sort((a, b) => a.grantedAt.getTime() - b.grantedAt.getTime());
  }

  /**
   * Deletes the grants and every artefact that names them (codes, access and refresh tokens),
   * and runs `alongside` (the withdrawal's event) in the same transaction.
   */
  async deleteGrants(
    grantIds: readonly string[],
    alongside: (manager: EntityManager) => Promise<void>,
  ): Promise<void> {
    await this.unitOfWork.transaction(async (m) => {
      await m.delete(OAuthArtefact, { grantId: In([...grantIds]) });
      await alongside(m);
    });
  }
}

/** The grant in the row, if it is one of `accountId` (the digest alone is not trusted). */
function grantOf(row: OAuthArtefact, accountId: string): StoredGrant[] {
  const payload = JSON.parse(row.payload) as {
    accountId?: unknown;
    clientId?: unknown;
    iat?: unknown;
    openid?: { scope?: unknown };
  };
  if (
    payload.accountId !== accountId ||
    typeof payload.clientId !== 'string' ||
    row.grantId === null
  ) {
    return [];
  }
  const scope = typeof payload.openid?.scope === 'string' ? payload.openid.scope : '';
  return [
    {
      grantId: row.grantId,
      clientId: payload.clientId,
      scopes: scope.split(' ').filter((value) => value !== ''),
      grantedAt: new Date((typeof payload.iat === 'number' ? payload.iat : 0) * 1000),
      expiresAt: row.expiresAt,
    },
  ];
}
