import type { DynamicModule, Type } from '@nestjs/common';
import type { MigrationClass } from './migrations/index.js';

/**
 * A team's own NestJS module mounted into Keygate, with the tables it owns: its entities it
 * registers itself (`TypeOrmModule.forFeature`), its migrations it names here. They run at
 * start-up after the core's, through the same runMigrations (one transaction, and on PostgreSQL
 * one advisory lock, so instances started together migrate once). List it in src/extensions.ts.
 */
export interface KeygateExtension {
  readonly module: Type | DynamicModule;
  /** In any order: each group runs in timestamp order, as TypeORM names them (`<Name><epoch-ms>`). */
  readonly migrations?: readonly MigrationClass[];
}

/** The migrations of `extensions`, to run after the core's. */
export function extensionMigrationsOf(
  extensions: readonly KeygateExtension[],
): readonly MigrationClass[] {
  return extensions.flatMap((extension) => extension.migrations ?? []);
}
