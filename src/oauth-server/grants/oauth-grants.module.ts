import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../../users/users.module.js';
import { OAuthArtefact } from '../entities/oauth-artefact.entity.js';
import { OAuthClientsModule } from '../oauth-clients.module.js';
import { AdminOAuthGrantsController } from './admin-oauth-grants.controller.js';
import { OAuthGrantRepository } from './oauth-grant.repository.js';
import { OAuthGrantsController } from './oauth-grants.controller.js';
import { OAuthGrantsService } from './oauth-grants.service.js';

/**
 * The consents people gave applications: their routes (`/api/auth/oauth/grants`, and the admin
 * API's `/api/admin/users/{id}/oauth-grants`) and the service the provider asks for a consent
 * already given. Mounted only while OAuthServer__Enabled is true.
 */
@Module({
  imports: [TypeOrmModule.forFeature([OAuthArtefact]), OAuthClientsModule, UsersModule],
  controllers: [OAuthGrantsController, AdminOAuthGrantsController],
  providers: [OAuthGrantRepository, OAuthGrantsService],
  exports: [OAuthGrantsService],
})
export class OAuthGrantsModule {}
