import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SigningKey } from './entities/signing-key.entity.js';
import { KeySet } from './key-set.js';
import { KeysService } from './keys.service.js';
import { SigningKeyRepository } from './signing-key.repository.js';

/**
 * Signing keys: their states, rotation, retirement and import (KeysService, which the admin CLI
 * and the admin API call), and the key set that token signing and the guard read (KeySet).
 */
@Module({
  imports: [TypeOrmModule.forFeature([SigningKey])],
  providers: [KeySet, KeysService, SigningKeyRepository],
  exports: [KeySet, KeysService],
})
export class KeysModule {}
