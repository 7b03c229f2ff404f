import { Module } from '@nestjs/common';
import { AdminIdentitiesController } from './admin-identities.controller.js';
import { IdentitiesAdminModule } from './identities-admin.module.js';

/**
 * The linked-identity routes of the admin API (`/api/admin/users/{id}/identities`). The
 * application mounts it only while Federation__Providers names a provider (otherwise the routes
 * do not exist, as any unknown path); AdminApiModule's global guard checks its keys.
 */
@Module({
  imports: [IdentitiesAdminModule],
  controllers: [AdminIdentitiesController],
})
export class FederationAdminModule {}
