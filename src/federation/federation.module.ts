import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountTokensModule } from '../account-tokens/account-tokens.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { PasswordsModule } from '../passwords/passwords.module.js';
import { ExpiredRows } from '../tokens/cleanup/expired-rows.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { MfaModule } from '../two-factor/mfa.module.js';
import { UsersModule } from '../users/users.module.js';
import { FederationCode } from './entities/federation-code.entity.js';
import { FederationFlow } from './entities/federation-flow.entity.js';
import { FederationCodeRepository } from './federation-code.repository.js';
import { FederationController } from './federation.controller.js';
import { FederationFlowRepository } from './federation-flow.repository.js';
import { FederationService } from './federation.service.js';
import { IdentitiesController } from './identities.controller.js';
import { IdentityProviders } from './identity-providers.js';
import { LinkedIdentitiesModule } from './linked-identities.module.js';

/**
 * Sign-in through other identity providers (issue 38). Mounted by the root module only while
 * Federation__Providers names a provider; otherwise none of its routes exist.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([FederationFlow, FederationCode]),
    UsersModule,
    TokensModule,
    PasswordsModule,
    MfaModule,
    PasskeysModule,
    AccountTokensModule,
    LinkedIdentitiesModule,
  ],
  controllers: [FederationController, IdentitiesController],
  providers: [
    FederationService,
    IdentityProviders,
    FederationFlowRepository,
    FederationCodeRepository,
  ],
  exports: [FederationService],
})
export class FederationModule implements OnModuleInit {
  constructor(
    private readonly expiredRows: ExpiredRows,
    private readonly flows: FederationFlowRepository,
    private readonly codes: FederationCodeRepository,
  ) {}

  /** Expired flows and one-time codes are purged by the expired-token cleanup, in batches. */
  onModuleInit(): void {
    this.expiredRows.add({
      name: 'federation flow(s)',
      purgeBatch: (now, limit) => this.flows.purgeExpiredBatch(now, limit),
    });
    this.expiredRows.add({
      name: 'federation one-time code(s)',
      purgeBatch: (now, limit) => this.codes.purgeExpiredBatch(now, limit),
    });
  }
}
