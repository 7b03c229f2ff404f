import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { OAuthConsent } from '../entities/oauth-consent.entity.js';

/** The queries on `oauth_consents`, on both engines. */
@Injectable()
export class OAuthConsentRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Records the consent, replacing the person's earlier one for the client. */
  async save(consent: OAuthConsent): Promise<void> {
    await this.unitOfWork.run((m) => this.saveWithin(m, consent));
  }

  /** save(), inside `m`'s transaction (with the consent's audit event). */
  async saveWithin(m: EntityManager, consent: OAuthConsent): Promise<void> {
    await m
      .createQueryBuilder()
      .insert()
      .into(OAuthConsent)
      .values(consent)
      .orUpdate(['scopes', 'grantId', 'grantedAt'], ['userId', 'clientId'])
      .execute();
  }

  find(userId: string, clientId: string): Promise<OAuthConsent | null> {
    return this.unitOfWork.run((m) => m.findOneBy(OAuthConsent, { userId, clientId }));
  }

  /** The person's consents, newest first. */
  ofUser(userId: string): Promise<OAuthConsent[]> {
    return this.unitOfWork.run((m) =>
      m.find(OAuthConsent, { where: { userId }, order: { grantedAt: 'DESC', clientId: 'ASC' } }),
    );
  }

  /** Deletes the consent inside `m`'s transaction; false when there was none. */
  async deleteWithin(m: EntityManager, userId: string, clientId: string): Promise<boolean> {
    const result = await m.delete(OAuthConsent, { userId, clientId });
    return (result.affected ?? 0) > 0;
  }
}
