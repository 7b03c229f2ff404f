import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { UsersModule } from '../users/users.module.js';
import { FederatedIdentity } from './entities/federated-identity.entity.js';
import { FederatedIdentityRepository } from './federated-identity.repository.js';
import { LinkedIdentities } from './linked-identities.js';

/**
 * The identities linked to accounts, without the providers: what the sign-in flows, the admin
 * API and the admin CLI share (the CLI has no provider to reach).
 */
@Module({
  imports: [TypeOrmModule.forFeature([FederatedIdentity]), UsersModule, PasskeysModule],
  providers: [LinkedIdentities, FederatedIdentityRepository],
  exports: [LinkedIdentities, FederatedIdentityRepository],
})
export class LinkedIdentitiesModule {}
