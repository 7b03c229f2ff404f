import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RecoveryCode } from './entities/recovery-code.entity.js';
import { TotpFactor } from './entities/totp-factor.entity.js';
import { TotpFactorRepository } from './totp-factor.repository.js';
import { TotpFactors } from './totp-factors.service.js';
import { TotpSecrets } from './totp-secrets.js';

/** The TOTP second factor's storage and code checks; its routes are TwoFactorRoutesModule's. */
@Module({
  imports: [TypeOrmModule.forFeature([TotpFactor, RecoveryCode])],
  providers: [TotpFactors, TotpFactorRepository, TotpSecrets],
  exports: [TotpFactors],
})
export class MfaModule {}
