import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source-options.js';
import type { MigrationClass } from './migrations/index.js';
import { runMigrations } from './run-migrations.js';
import { UnitOfWork } from './unit-of-work.js';

export interface DatabaseOptions {
  /**
   * Run pending migrations once connected (the default). Off only for the admin CLI's
   * diagnostics, which must work while a migration refuses to run.
   */
  readonly migrate?: boolean;
  /** The mounted extensions' migrations, run after the core's. */
  readonly extensionMigrations?: readonly MigrationClass[];
}

@Global()
@Module({})
export class DatabaseModule {
  /**
   * The connection, with the core's migrations and `extensionMigrations`. Entities are not
   * listed here: each module registers its own with `TypeOrmModule.forFeature`.
   */
  static forRoot({ migrate = true, extensionMigrations }: DatabaseOptions = {}): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            ...dataSourceOptions(config.database, { extensionMigrations }),
            autoLoadEntities: true,
            // A file that cannot be opened will not open on a retry; a PostgreSQL server that
            // is still starting may.
            retryAttempts: config.database.target.type === 'postgres' ? 5 : 0,
            retryDelay: 1_000,
          }),
          dataSourceFactory: async (options) => {
            if (options === undefined) {
              throw new Error('TypeORM options are missing');
            }
            const dataSource = await new DataSource(options).initialize();
            if (migrate) {
              try {
                await runMigrations(dataSource);
              } catch (error: unknown) {
                // Start-up stops here: let go of the file or the pool before it does.
                await dataSource.destroy();
                throw error;
              }
            }
            return dataSource;
          },
        }),
      ],
      providers: [UnitOfWork],
      exports: [UnitOfWork],
    };
  }
}
