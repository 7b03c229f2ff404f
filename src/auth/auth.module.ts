import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountLock } from './account-lock.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { JwtAuthGuard } from './jwt-auth.guard.js';
import { JwtStrategy } from './jwt.strategy.js';
import { PasswordHasher } from './password-hasher.js';

@Module({
  imports: [PassportModule, UsersModule, TokensModule],
  controllers: [AuthController],
  providers: [AuthService, PasswordHasher, AccountLock, JwtStrategy, JwtAuthGuard],
  exports: [JwtAuthGuard],
})
export class AuthModule {}
