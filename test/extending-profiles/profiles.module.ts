import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { KeygateExtension } from '../../src/database/keygate-extension.js';
import { Profile } from './entities/profile.entity.js';
import { CreateProfiles1800000000000 } from './migrations/1800000000000-CreateProfiles.js';
import { ProfilesService } from './profiles.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Profile])],
  providers: [ProfilesService],
})
export class ProfilesModule {}

/** The module and the migrations of its table, for src/extensions.ts. */
export const PROFILES_EXTENSION: KeygateExtension = {
  module: ProfilesModule,
  migrations: [CreateProfiles1800000000000],
};
