import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MailModule } from '../mail/mail.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountTokenRepository } from './account-token.repository.js';
import { AccountToken } from './entities/account-token.entity.js';
import { MailedTokens } from './mailed-tokens.js';

/**
 * The single-use tokens of mailed links (`account_tokens`): password reset, e-mail verification
 * and e-mail change. The password and account flows send and consume them through MailedTokens.
 */
@Module({
  imports: [TypeOrmModule.forFeature([AccountToken]), UsersModule, MailModule],
  providers: [MailedTokens, AccountTokenRepository],
  exports: [MailedTokens],
})
export class AccountTokensModule {}
