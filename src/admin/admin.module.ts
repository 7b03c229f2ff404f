import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { MfaModule } from '../two-factor/mfa.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { AdminService } from './admin.service.js';

/** Operator actions on accounts and tokens; used by the admin CLI, not served over HTTP. */
@Module({
  imports: [UsersModule, TokensModule, AuditModule, MfaModule, PasskeysModule],
  providers: [AdminService],
  exports: [AdminService],
})
export class AdminModule {}
