import { Module } from '@nestjs/common';
import { KeysModule } from '../keys.module.js';
import { AdminSigningKeysController } from './admin-signing-keys.controller.js';
import { SigningKeysAdminService } from './signing-keys-admin.service.js';

/** The signing-key routes of the admin API (`/api/admin/signing-keys`), which AdminApiModule mounts. */
@Module({
  imports: [KeysModule],
  controllers: [AdminSigningKeysController],
  providers: [SigningKeysAdminService],
})
export class KeysAdminModule {}
