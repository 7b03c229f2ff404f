import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { AccountChangeListener } from './account-cache/account-change-listener.js';
import { AccountStateCache } from './account-cache/account-state-cache.js';
import { User } from './entities/user.entity.js';
import { UserRepository } from './user.repository.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([User])],
  controllers: [UsersController],
  providers: [
    UsersService,
    UserRepository,
    {
      provide: AccountStateCache,
      inject: [AppConfig],
      // Elapsed time, not the Clock's date: the staleness bound must not move with the wall clock.
      useFactory: (config: AppConfig) =>
        new AccountStateCache(config.database.accountCache, () => performance.now()),
    },
    AccountChangeListener,
  ],
  exports: [UsersService],
})
export class UsersModule {}
