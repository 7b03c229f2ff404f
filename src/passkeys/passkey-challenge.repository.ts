import { Injectable } from '@nestjs/common';
import { LessThan } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { PasskeyChallenge } from './entities/passkey-challenge.entity.js';

/** The queries on `passkey_challenges`, on both engines. */
@Injectable()
export class PasskeyChallengeRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /**
   * Stores a new challenge, and drops those expired by `now` (by the expiry index), so the table
   * holds no more than the challenges of one lifetime.
   */
  async insert(challenge: PasskeyChallenge, now: Date): Promise<void> {
    await this.unitOfWork.transaction(async (m) => {
      await m.delete(PasskeyChallenge, { expiresAt: LessThan(now) });
      await m.insert(PasskeyChallenge, challenge);
    });
  }

  /**
   * Deletes the challenge with this digest and answers it, whatever it was made for: null when
   * there is none, or another request deleted it first. One caller per challenge, across
   * instances, wins it; the caller then checks what it was for.
   */
  take(challengeHash: string): Promise<PasskeyChallenge | null> {
    return this.unitOfWork.transaction(async (m) => {
      const found = await m.findOneBy(PasskeyChallenge, { challengeHash });
      if (found === null) {
        return null;
      }
      const result = await m.delete(PasskeyChallenge, { challengeHash });
      return result.affected === 1 ? found : null;
    });
  }
}
