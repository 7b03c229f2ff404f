import 'reflect-metadata';
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { DataSource } from 'typeorm';
import { AuditEvent } from '../audit/entities/audit-event.entity.js';
import { UserAgent } from '../audit/entities/user-agent.entity.js';
import { AccountToken } from '../account-tokens/entities/account-token.entity.js';
import { parseConnectionString } from '../config/settings/connection-string.js';
import {
  DEFAULT_CONNECTION_STRING,
  DEFAULT_SQLITE_CACHE_SIZE_MB,
  DEFAULT_SQLITE_MMAP_SIZE_MB,
} from '../config/environment-variables.js';
import { EXTENSIONS } from '../extensions.js';
import { OutboxMail } from '../mail/entities/outbox-mail.entity.js';
import { RecoveryCode } from '../two-factor/entities/recovery-code.entity.js';
import { TotpFactor } from '../two-factor/entities/totp-factor.entity.js';
import { RefreshToken } from '../tokens/entities/refresh-token.entity.js';
import { Session } from '../tokens/entities/session.entity.js';
import { User } from '../users/entities/user.entity.js';
import { SigningKey } from '../keys/entities/signing-key.entity.js';
import { EmailCode } from '../email-codes/entities/email-code.entity.js';
import { WebhookDelivery } from '../webhooks/entities/webhook-delivery.entity.js';
import { WebhookQueued } from '../webhooks/entities/webhook-queued.entity.js';
import { WebhookSubscription } from '../webhooks/entities/webhook-subscription.entity.js';
import { dataSourceOptions } from './data-source-options.js';
import { extensionMigrationsOf } from './keygate-extension.js';

// For the TypeORM CLI (`npm run migration:*`), and for tests that build a data source outside
// Nest. No feature imports this file: the application takes each entity from its module
// (`TypeOrmModule.forFeature`), so only an entry point names them all.

/** Every core entity. */
export const ENTITIES = [
  User,
  Session,
  RefreshToken,
  AuditEvent,
  UserAgent,
  AccountToken,
  OutboxMail,
  TotpFactor,
  RecoveryCode,
  SigningKey,
  EmailCode,
  WebhookSubscription,
  WebhookDelivery,
  WebhookQueued,
];

/**
 * The database the service would use, read from the environment or `.env` (the environment
 * wins), without requiring the rest of the configuration. `.env` is read, not loaded, so that
 * importing this file changes nothing in the process.
 */
function connectionString(): string {
  const file = existsSync('.env') ? parseEnv(readFileSync('.env', 'utf8')) : {};
  const key = 'ConnectionStrings__DefaultConnection';
  return process.env[key] ?? file[key] ?? DEFAULT_CONNECTION_STRING;
}

export default new DataSource(
  dataSourceOptions(
    {
      target: parseConnectionString(connectionString()),
      poolSize: 2,
      connectionTimeoutMs: 10_000,
      statementTimeoutMs: 60_000,
      sqliteCacheSizeMb: DEFAULT_SQLITE_CACHE_SIZE_MB,
      sqliteMmapSizeMb: DEFAULT_SQLITE_MMAP_SIZE_MB,
      // Migrations are rare and must never be half-remembered after a power cut.
      sqliteSynchronous: 'full',
      // The TypeORM CLI answers no bearer request.
      accountCache: false,
    },
    { entities: ENTITIES, extensionMigrations: extensionMigrationsOf(EXTENSIONS) },
  ),
);
