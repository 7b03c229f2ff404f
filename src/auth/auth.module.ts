import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { AccountModule } from '../account/account.module.js';
import { KeysModule } from '../keys/keys.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { PasswordsModule } from '../passwords/passwords.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { MfaModule } from '../two-factor/mfa.module.js';
import { UsersModule } from '../users/users.module.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { JwtAuthGuard } from './jwt-auth.guard.js';
import { JwtStrategy } from './jwt.strategy.js';

/**
 * Who is calling: register and login (the interface's routes no other capability owns), the
 * global bearer guard and its strategy. A login with a second factor asks the factor's module.
 */
@Module({
  imports: [
    PassportModule,
    UsersModule,
    TokensModule,
    PasswordsModule,
    AccountModule,
    MfaModule,
    KeysModule,
    PasskeysModule,
  ],
  controllers: [AuthController],
  providers: [AuthService, JwtStrategy, JwtAuthGuard],
  exports: [JwtAuthGuard, AuthService],
})
export class AuthModule {}
