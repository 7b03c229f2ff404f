import { Module } from '@nestjs/common';
import { JwksController } from './jwks.controller.js';
import { KeySetRefresher } from './key-set-refresher.js';
import { KeysModule } from './keys.module.js';

/**
 * What a serving instance adds to KeysModule: the JWKS route, and the readings of the key set at
 * start-up and on a timer. The admin CLI imports KeysModule alone.
 */
@Module({
  imports: [KeysModule],
  controllers: [JwksController],
  providers: [KeySetRefresher],
})
export class KeyServingModule {}
