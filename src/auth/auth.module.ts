import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KeysModule } from '../keys/keys.module.js';
import { MailModule } from '../mail/mail.module.js';
import { MfaModule } from '../two-factor/mfa.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountLock } from '../passwords/account-lock.js';
import { AccountTokenRepository } from '../account-tokens/account-token.repository.js';
import { AccountController } from '../account/account.controller.js';
import { AccountService } from '../account/account.service.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { EmailVerificationService } from '../account/email-verification.service.js';
import { AccountToken } from '../account-tokens/entities/account-token.entity.js';
import { FailedLogins } from '../passwords/failed-logins.js';
import { JwtAuthGuard } from './jwt-auth.guard.js';
import { JwtStrategy } from './jwt.strategy.js';
import { MailedTokens } from '../account-tokens/mailed-tokens.js';
import { PasswordConfirmation } from '../passwords/password-confirmation.js';
import { PasswordHasher } from '../passwords/password-hasher.js';
import { PasswordResetService } from '../passwords/password-reset.service.js';
import { TwoFactorController } from '../two-factor/two-factor.controller.js';
import { PasskeyFlowsService } from '../passkeys/passkey-flows.service.js';
import { PasskeysController } from '../passkeys/passkeys.controller.js';
import { TwoFactorService } from '../two-factor/two-factor.service.js';

@Module({
  imports: [
    PassportModule,
    TypeOrmModule.forFeature([AccountToken]),
    UsersModule,
    TokensModule,
    MailModule,
    MfaModule,
    KeysModule,
    PasskeysModule,
  ],
  controllers: [AuthController, AccountController, TwoFactorController, PasskeysController],
  providers: [
    AuthService,
    AccountService,
    PasswordResetService,
    TwoFactorService,
    EmailVerificationService,
    MailedTokens,
    AccountTokenRepository,
    PasswordConfirmation,
    FailedLogins,
    PasswordHasher,
    AccountLock,
    JwtStrategy,
    JwtAuthGuard,
    PasskeyFlowsService,
  ],
  exports: [JwtAuthGuard, FailedLogins],
})
export class AuthModule {}
