import { Module } from '@nestjs/common';
import { AccountTokensModule } from '../account-tokens/account-tokens.module.js';
import { MailModule } from '../mail/mail.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountLock } from './account-lock.js';
import { FailedLogins } from './failed-logins.js';
import { PasswordChangeService } from './password-change.service.js';
import { PasswordConfirmation } from './password-confirmation.js';
import { PasswordHasher } from './password-hasher.js';
import { PasswordResetService } from './password-reset.service.js';
import { PasswordsController } from './passwords.controller.js';

/**
 * Passwords: hashing, policy, the failed-login count and lockout, the proof of presence other
 * sensitive routes ask for (PasswordConfirmation), and the change and reset routes. Every
 * sign-in path counts its failures through FailedLogins.
 */
@Module({
  imports: [UsersModule, TokensModule, MailModule, AccountTokensModule],
  controllers: [PasswordsController],
  providers: [
    PasswordHasher,
    AccountLock,
    FailedLogins,
    PasswordConfirmation,
    PasswordResetService,
    PasswordChangeService,
  ],
  exports: [PasswordHasher, AccountLock, FailedLogins, PasswordConfirmation],
})
export class PasswordsModule {}
