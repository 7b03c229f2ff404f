import { Module } from '@nestjs/common';
import { AccountTokensModule } from '../account-tokens/account-tokens.module.js';
import { MailModule } from '../mail/mail.module.js';
import { PasswordsModule } from '../passwords/passwords.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountController } from './account.controller.js';
import { AccountService } from './account.service.js';
import { EmailVerificationService } from './email-verification.service.js';

/**
 * The account's own routes: proving and changing its address, deleting it. Registration asks it
 * for the first verification mail (EmailVerificationService).
 */
@Module({
  imports: [UsersModule, MailModule, PasswordsModule, AccountTokensModule],
  controllers: [AccountController],
  providers: [AccountService, EmailVerificationService],
  exports: [EmailVerificationService],
})
export class AccountModule {}
