import { Module } from '@nestjs/common';
import { PasswordsModule } from '../passwords/passwords.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { PasskeyFlowsService } from './passkey-flows.service.js';
import { PasskeysController } from './passkeys.controller.js';
import { PasskeysModule } from './passkeys.module.js';

/**
 * The passkey routes (register, list, rename, remove, sign in) over the ceremonies and storage
 * (PasskeysModule), which the login's second step and the admin CLI import alone.
 */
@Module({
  imports: [PasskeysModule, PasswordsModule, TokensModule, UsersModule],
  controllers: [PasskeysController],
  providers: [PasskeyFlowsService],
  // The OpenID provider's hosted sign-in page signs in with a passkey under the same rules.
  exports: [PasskeyFlowsService],
})
export class PasskeyRoutesModule {}
