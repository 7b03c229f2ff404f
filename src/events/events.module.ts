import { Global, Module } from '@nestjs/common';
import { AuthEvents } from './auth-events.js';

/** Global so any module can emit or listen without importing this one. */
@Global()
@Module({ providers: [AuthEvents], exports: [AuthEvents] })
export class EventsModule {}
