import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OAuthArtefact } from './entities/oauth-artefact.entity.js';
import { OAuthClient } from './entities/oauth-client.entity.js';
import { OAuthClientRepository } from './oauth-client.repository.js';
import { OAuthClientsService } from './oauth-clients.service.js';
import { InitialAccessTokensService } from './registration/initial-access-tokens.service.js';
import { OAuthArtefactRepository } from './storage/oauth-artefact.repository.js';

/**
 * The applications registered with the OpenID provider, and the initial access tokens that let
 * applications register themselves, without any route: the admin CLI imports it whether the
 * provider is on or not, so operators can register clients before turning it on.
 */
@Module({
  imports: [TypeOrmModule.forFeature([OAuthClient, OAuthArtefact])],
  providers: [
    OAuthClientRepository,
    OAuthClientsService,
    OAuthArtefactRepository,
    InitialAccessTokensService,
  ],
  // The artefact repository is shared with OAuthProviderModule, the same capability's other
  // module (one instance: the provider's storage and the CLI's tokens are the same rows).
  exports: [OAuthClientsService, InitialAccessTokensService, OAuthArtefactRepository],
})
export class OAuthClientsModule {}
