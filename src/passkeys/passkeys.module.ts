import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PasskeyChallenge } from './entities/passkey-challenge.entity.js';
import { Passkey } from './entities/passkey.entity.js';
import { PasskeyChallengeRepository } from './passkey-challenge.repository.js';
import { PasskeyRepository } from './passkey.repository.js';
import { Passkeys } from './passkeys.service.js';

/**
 * Passkeys' storage and ceremonies. The login's second step and the admin CLI ask it; it asks
 * neither. Its routes are PasskeyRoutesModule's (PasskeysController), as TOTP's are.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Passkey, PasskeyChallenge])],
  providers: [Passkeys, PasskeyRepository, PasskeyChallengeRepository],
  exports: [Passkeys],
})
export class PasskeysModule {}
