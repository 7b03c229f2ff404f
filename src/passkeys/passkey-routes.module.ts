import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { PasskeyFlowsService } from './passkey-flows.service.js';
import { PasskeysController } from './passkeys.controller.js';
import { PasskeysModule } from './passkeys.module.js';

/**
 * The passkey routes. A module of its own beside PasskeysModule because adding a passkey asks
 * for the password (the auth module's PasswordConfirmation), while the auth module's login asks
 * PasskeysModule for second factors: one module would make a cycle.
 */
@Module({
  imports: [PasskeysModule, AuthModule, UsersModule, TokensModule],
  controllers: [PasskeysController],
  providers: [PasskeyFlowsService],
})
export class PasskeyRoutesModule {}
