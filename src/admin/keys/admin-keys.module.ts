import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminKeyRepository } from './admin-key.repository.js';
import { AdminKeysService } from './admin-keys.service.js';
import { AdminKey } from './entities/admin-key.entity.js';

/** Admin API keys: what the admin CLI manages and the admin API's guard checks. */
@Module({
  imports: [TypeOrmModule.forFeature([AdminKey])],
  providers: [AdminKeyRepository, AdminKeysService],
  exports: [AdminKeysService],
})
export class AdminKeysModule {}
