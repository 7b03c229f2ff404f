import { Module } from '@nestjs/common';
import { UsersModule } from '../../users/users.module.js';
import { LinkedIdentitiesModule } from '../linked-identities.module.js';
import { IdentitiesAdminService } from './identities-admin.service.js';

/** An operator's operations on linked identities: the admin API's and the CLI's. */
@Module({
  imports: [UsersModule, LinkedIdentitiesModule],
  providers: [IdentitiesAdminService],
  exports: [IdentitiesAdminService],
})
export class IdentitiesAdminModule {}
