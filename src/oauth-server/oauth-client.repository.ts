import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work.js';
import { OAuthClient } from './entities/oauth-client.entity.js';

/** The queries on `oauth_clients`. Used by the OpenID provider's services only. */
@Injectable()
export class OAuthClientRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  async insert(client: OAuthClient): Promise<void> {
    await this.unitOfWork.run((m) => m.insert(OAuthClient, client));
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

  /** False when there was no such client. */
  async delete(id: string): Promise<boolean> {
    const result = await this.unitOfWork.run((m) => m.delete(OAuthClient, { id }));
    return (result.affected ?? 0) > 0;
  }

  /** Replaces a confidential client's secret digest; false when there is no such client. */
  async replaceSecretDigest(id: string, secretDigest: string): Promise<boolean> {
    const result = await this.unitOfWork.run((m) =>
      m.update(OAuthClient, { id, isPublic: false }, { secretDigest }),
    );
    return (result.affected ?? 0) > 0;
  }
}
