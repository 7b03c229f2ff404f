import { Module } from '@nestjs/common';
import { TokensModule } from '../tokens/tokens.module.js';
import { ActiveSessionGuard } from './active-session.guard.js';
import { SessionsController } from './sessions.controller.js';
import { SessionsService } from './sessions.service.js';

@Module({
  imports: [TokensModule],
  controllers: [SessionsController],
  providers: [SessionsService, ActiveSessionGuard],
  exports: [ActiveSessionGuard],
})
export class SessionsModule {}
