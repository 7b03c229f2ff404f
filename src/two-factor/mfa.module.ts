import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { SecondFactorCheck } from './second-factor-check.js';
import { RecoveryCode } from './entities/recovery-code.entity.js';
import { TotpFactor } from './entities/totp-factor.entity.js';
import { TotpFactorRepository } from './totp-factor.repository.js';
import { TotpFactors } from './totp-factors.service.js';
import { TotpSecrets } from './totp-secrets.js';

/**
 * The TOTP second factor's storage and code checks, and the sign-in's second step (a code or a
 * passkey); its routes are TwoFactorRoutesModule's.
 */
@Module({
  imports: [TypeOrmModule.forFeature([TotpFactor, RecoveryCode]), PasskeysModule],
  providers: [TotpFactors, TotpFactorRepository, TotpSecrets, SecondFactorCheck],
  exports: [TotpFactors, SecondFactorCheck],
})
export class MfaModule {}
