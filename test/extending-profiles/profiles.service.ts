import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { AuthEvents } from '../../src/events/auth-events.js';
import { Profile } from './entities/profile.entity.js';

@Injectable()
export class ProfilesService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(ProfilesService.name);
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly events: AuthEvents,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  onModuleInit(): void {
    // Listeners run inside the request and must not block it: the row is written beside it.
    this.events.subscribe(({ event, at }) => {
      if (event.type === 'registered') {
        this.track(this.create(event.userId, at));
      }
    });
  }

  /** Resolves once every profile queued so far is written. */
  async flush(): Promise<void> {
    await Promise.all(this.writes);
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.flush();
  }

  private async create(userId: string, createdAt: Date): Promise<void> {
    const profile: Profile = { userId, displayName: null, createdAt };
    await this.unitOfWork.run((m) => m.insert(Profile, profile));
  }

  private track(write: Promise<void>): void {
    const tracked: Promise<void> = write
      .catch((error: unknown) => {
        this.logger.error(`A profile could not be written: ${String(error)}`);
      })
      .finally(() => this.writes.delete(tracked));
    this.writes.add(tracked);
  }
}
