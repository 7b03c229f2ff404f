import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KeysModule } from '../keys/keys.module.js';
import { MailModule } from '../mail/mail.module.js';
import { MfaModule } from '../mfa/mfa.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountLock } from './account-lock.js';
import { AccountTokenRepository } from './account-token.repository.js';
import { AccountController } from './account.controller.js';
import { AccountService } from './account.service.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { EmailVerificationService } from './email-verification.service.js';
import { AccountToken } from './entities/account-token.entity.js';
import { FailedLogins } from './failed-logins.js';
import { JwtAuthGuard } from './jwt-auth.guard.js';
import { JwtStrategy } from './jwt.strategy.js';
import { MailedTokens } from './mailed-tokens.js';
import { PasswordConfirmation } from './password-confirmation.js';
import { PasswordHasher } from './password-hasher.js';
import { PasswordResetService } from './password-reset.service.js';
import { TwoFactorController } from './two-factor.controller.js';
import { PasskeyFlowsService } from './passkey-flows.service.js';
import { PasskeysController } from './passkeys.controller.js';
import { TwoFactorService } from './two-factor.service.js';

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
