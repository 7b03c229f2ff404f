import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source-options.js';
import { runMigrations } from './run-migrations.js';
import { UnitOfWork } from './unit-of-work.js';

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        ...dataSourceOptions(config.database),
        entities: undefined,
        autoLoadEntities: true,
        // A file that cannot be opened will not open on a retry; a PostgreSQL server that is
        // still starting may.
        retryAttempts: config.database.target.type === 'postgres' ? 5 : 0,
        retryDelay: 1_000,
      }),
      dataSourceFactory: async (options) => {
        if (options === undefined) {
          throw new Error('TypeORM options are missing');
        }
        const dataSource = await new DataSource(options).initialize();
        await runMigrations(dataSource);
        return dataSource;
      },
    }),
  ],
  providers: [UnitOfWork],
  exports: [UnitOfWork],
})
export class DatabaseModule {}
