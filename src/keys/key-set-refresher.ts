import {
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { KeySet } from './key-set.js';
import { KeysService } from './keys.service.js';

/**
 * A serving instance reads the key set before it takes requests, then every
 * Keys__RefreshIntervalSeconds, so a change made elsewhere (the CLI, another instance) reaches it
 * within that time without a restart. A reading that fails is logged and the last one stays.
 */
@Injectable()
export class KeySetRefresher implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private readonly intervalMs: number;

  constructor(
    private readonly keys: KeysService,
    private readonly keySet: KeySet,
    config: AppConfig,
  ) {
    this.intervalMs = config.keys.refreshIntervalSeconds * 1000;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.keys.start();
    this.timer = setInterval(() => {
      this.running = this.keys.refresh().catch((error: unknown) => {
        this.keySet.reportStaleReading(error);
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
