import { Module } from '@nestjs/common';
import { PasswordsModule } from '../passwords/passwords.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { MfaModule } from './mfa.module.js';
import { TwoFactorController } from './two-factor.controller.js';
import { TwoFactorService } from './two-factor.service.js';

/**
 * The second factor's routes (enrol, confirm, disable, recovery codes) over the factor itself
 * (MfaModule), which the login's second step and the admin CLI import alone.
 */
@Module({
  imports: [MfaModule, PasswordsModule, TokensModule, UsersModule],
  controllers: [TwoFactorController],
  providers: [TwoFactorService],
})
export class TwoFactorRoutesModule {}
