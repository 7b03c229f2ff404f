import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OAuthClient } from './entities/oauth-client.entity.js';
import { OAuthClientRepository } from './oauth-client.repository.js';
import { OAuthClientsService } from './oauth-clients.service.js';

/**
 * The applications registered with the OpenID provider, without any route: the admin CLI imports
 * it whether the provider is on or not, so operators can register clients before turning it on.
 */
@Module({
  imports: [TypeOrmModule.forFeature([OAuthClient])],
  providers: [OAuthClientRepository, OAuthClientsService],
  exports: [OAuthClientsService],
})
export class OAuthClientsModule {}
