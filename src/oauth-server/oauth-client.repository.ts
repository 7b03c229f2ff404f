import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { OAuthClient } from './entities/oauth-client.entity.js';

/** Work that commits with a change or not at all (the change's audit event). */
type Alongside = (manager: EntityManager) => Promise<void>;

/** The queries on `oauth_clients`. Used by the OpenID provider's services only. */
@Injectable()
export class OAuthClientRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Inserts the client and runs `alongside` (its event) in the same transaction. */
  async insert(client: OAuthClient, alongside: Alongside): Promise<void> {
    await this.unitOfWork.transaction(async (m) => {
      await m.insert(OAuthClient, client);
      await alongside(m);
    });
  }

  byId(id: string): Promise<OAuthClient | null> {
    return this.unitOfWork.run((m) => m.findOneBy(OAuthClient, { id }));
  }

  /** Every client, oldest first; a handful, read by operators. */
  all(): Promise<OAuthClient[]> {
    return this.unitOfWork.run((m) =>
      m.find(OAuthClient, { order: { createdAt: 'ASC', id: 'ASC' } }),
    );
  }

  /**
   * Deletes the client and, if there was one, runs `alongside` (its event) in the same
   * transaction. False when there was no such client.
   */
  async delete(id: string, alongside: Alongside): Promise<boolean> {
    return this.unitOfWork.transaction(async (m) => {
      const result = await m.delete(OAuthClient, { id });
      if ((result.affected ?? 0) === 0) {
        return false;
      }
      await alongside(m);
      return true;
    });
  }

  /** Replaces a confidential client's secret digest; false when there is no such client. */
  async replaceSecretDigest(id: string, secretDigest: string): Promise<boolean> {
    const result = await this.unitOfWork.run((m) =>
      m.update(OAuthClient, { id, isPublic: false }, { secretDigest }),
    );
    return (result.affected ?? 0) > 0;
  }
}
