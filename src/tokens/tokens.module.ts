import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JWT_ALGORITHM, signingKey } from '../common/jwt/jwt-key.js';
import { AppConfig } from '../config/app-config.js';
import { KeysModule } from '../keys/keys.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccessTokenService } from './access-token.service.js';
import { RefreshToken } from './entities/refresh-token.entity.js';
import { Session } from './entities/session.entity.js';
import { TokensController } from './tokens.controller.js';
import { RefreshSuccessors } from './storage/refresh-successors.js';
import { RefreshTokenRepository } from './storage/refresh-token.repository.js';
import { SessionRepository } from './storage/session.repository.js';
import { ExpiredRows } from './cleanup/expired-rows.js';
import { TokenCleanupService } from './cleanup/token-cleanup.service.js';
import { TokensService } from './tokens.service.js';

@Module({
  imports: [
    TypeOrmModule.forFeature([Session, RefreshToken]),
    UsersModule,
    KeysModule,
    JwtModule.registerAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        const { kid, key } = signingKey(config.jwt);
        return {
          privateKey: key,
          signOptions: {
            algorithm: JWT_ALGORITHM,
            keyid: kid,
            issuer: config.jwt.issuer,
            audience: config.jwt.audience,
          },
        };
      },
    }),
  ],
  controllers: [TokensController],
  providers: [
    TokensService,
    SessionRepository,
    RefreshTokenRepository,
    AccessTokenService,
    TokenCleanupService,
    ExpiredRows,
    RefreshSuccessors,
  ],
  exports: [TokensService, TokenCleanupService, ExpiredRows],
})
export class TokensModule {}
