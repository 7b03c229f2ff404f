import { Injectable } from '@nestjs/common';
import { IsNull, LessThan, type EntityManager } from 'typeorm';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { OAuthArtefact } from '../entities/oauth-artefact.entity.js';

/** The queries on `oauth_artefacts`, on both engines. Used by the provider's storage adapter. */
@Injectable()
export class OAuthArtefactRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Inserts the row, or replaces it except for its use (a used code stays used). */
  async save(row: Omit<OAuthArtefact, 'consumedAt'>): Promise<void> {
    await this.unitOfWork.run((m) =>
      m
        .createQueryBuilder()
        .insert()
        .into(OAuthArtefact)
        .values({ ...row, consumedAt: null })
        .orUpdate(
          ['payload', 'grantId', 'uidDigest', 'userCodeDigest', 'expiresAt'],
          ['kind', 'idDigest'],
        )
        .execute(),
    );
  }

  byDigest(kind: string, idDigest: string): Promise<OAuthArtefact | null> {
    return this.unitOfWork.run((m) => m.findOneBy(OAuthArtefact, { kind, idDigest }));
  }

  byUidDigest(kind: string, uidDigest: string): Promise<OAuthArtefact | null> {
    return this.unitOfWork.run((m) => m.findOneBy(OAuthArtefact, { kind, uidDigest }));
  }

  byUserCodeDigest(kind: string, userCodeDigest: string): Promise<OAuthArtefact | null> {
    return this.unitOfWork.run((m) => m.findOneBy(OAuthArtefact, { kind, userCodeDigest }));
  }

  /**
   * Marks the row used if it was not: one conditional statement, so of two uses at once (on one
   * instance or on two sharing PostgreSQL) exactly one sees true. False: used before, or gone.
   */
  async consume(kind: string, idDigest: string, at: Date): Promise<boolean> {
    const result = await this.unitOfWork.run((m) =>
      m.update(OAuthArtefact, { kind, idDigest, consumedAt: IsNull() }, { consumedAt: at }),
    );
    return (result.affected ?? 0) > 0;
  }

  async delete(kind: string, idDigest: string): Promise<void> {
    await this.unitOfWork.run((m) => m.delete(OAuthArtefact, { kind, idDigest }));
  }

  /** Deletes every artefact of the grant (its codes, tokens and the grant itself). */
  async deleteGrant(grantId: string): Promise<void> {
    await this.unitOfWork.run((m) => m.delete(OAuthArtefact, { grantId }));
  }

  /** Deletes the grant itself and every artefact of it, inside `m`'s transaction. */
  async deleteGrantWithin(m: EntityManager, grantId: string, grantDigest: string): Promise<void> {
    await m.delete(OAuthArtefact, { grantId });
    await m.delete(OAuthArtefact, { kind: 'Grant', idDigest: grantDigest });
  }

  /** Deletes at most `limit` artefacts that expired before `at`; how many. */
  async purgeExpired(at: Date, limit: number): Promise<number> {
    return this.unitOfWork.transaction(async (m) => {
      const expired = await m.find(OAuthArtefact, {
        select: { kind: true, idDigest: true },
        where: { expiresAt: LessThan(at) },
        take: limit,
      });
      if (expired.length === 0) {
        return 0;
      }
      const result = await m.delete(
        OAuthArtefact,
        expired.map(({ kind, idDigest }) => ({ kind, idDigest })),
      );
      return result.affected ?? expired.length;
    });
  }
}
