import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PasswordsModule } from '../passwords/passwords.module.js';
import { MailModule } from '../mail/mail.module.js';
import { MfaModule } from '../two-factor/mfa.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { EmailCodeRepository } from './email-code.repository.js';
import { EmailCodeSecrets } from './email-code-secrets.js';
import { EmailCodesController } from './email-codes.controller.js';
import { EmailCodesService } from './email-codes.service.js';
import { EmailCode } from './entities/email-code.entity.js';

/** Sign-in with a one-time code mailed to the address; off unless EmailCode__Enabled. */
@Module({
  imports: [
    TypeOrmModule.forFeature([EmailCode]),
    UsersModule,
    TokensModule,
    MailModule,
    MfaModule,
    PasswordsModule,
  ],
  controllers: [EmailCodesController],
  providers: [EmailCodesService, EmailCodeRepository, EmailCodeSecrets],
  // The OpenID provider's hosted sign-in page offers the mailed code under the same rules.
  exports: [EmailCodesService],
})
export class EmailCodesModule {}
