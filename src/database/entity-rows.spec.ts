import type { Database } from 'better-sqlite3';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { AuditEvent } from '../audit/entities/audit-event.entity.js';
import { RandomSource } from '../common/random/random-source.js';
import { AuditEventRepository } from '../audit/audit-event.repository.js';
import { RefreshTokenRepository } from '../tokens/storage/refresh-token.repository.js';
import { RefreshToken } from '../tokens/entities/refresh-token.entity.js';
import { Session } from '../tokens/entities/session.entity.js';
import { SessionRepository } from '../tokens/storage/session.repository.js';
import { User } from '../users/entities/user.entity.js';
import { UserRepository } from '../users/user.repository.js';
import { buildUser } from '../../test/factories/user.factory.js';
import type { Precondition } from './guarded-write.js';
import { sqliteConnectionOf } from './driver-handle.js';
import { EntityRows } from './entity-rows.js';
import { UnitOfWork } from './unit-of-work.js';
import { WebhookQueued } from '../webhooks/entities/webhook-queued.entity.js';
import { WebhookDeliveryRepository } from '../webhooks/webhook-delivery.repository.js';

/** A test-only entity: stands for any table, with a column of each kind the entities use. */
@Entity('gadgets')
class Gadget {
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Column({ type: Date })
  madeAt: Date;

  @Column({ type: Date, nullable: true })
  soldAt: Date | null;

  @Column({ type: Boolean })
  isBroken: boolean;

  @Column({ type: Number })
  weight: number;

  @Column({ type: String, length: 10, nullable: true })
  note: string | null;
}

const GADGET = Object.assign(new Gadget(), {
  id: 'g1',
  madeAt: new Date('2026-01-01T00:00:00.123Z'),
  soldAt: null,
  isBroken: true,
  weight: 42,
  note: 'ok',
});

function handle(dataSource: DataSource): Database {
  return sqliteConnectionOf(dataSource);
}

/** The quoted column names of an `INSERT INTO t (...)`. */
function insertedColumns(sql: string): string[] {
  const list = /INSERT INTO "[a-z_]+" \(([^)]*)\)/.exec(sql)?.[1] ?? '';
  return list.split(',').map((name) => name.trim().replaceAll('"', ''));
}

describe(EntityRows.name, () => {
  describe('on an entity of its own', () => {
    let dataSource: DataSource;
    let sut: EntityRows<Gadget>;

    beforeEach(async () => {
      dataSource = new DataSource({
        type: 'better-sqlite3',
        database: ':memory:',
        entities: [Gadget],
      });
      await dataSource.initialize();
      // The schema a migration would make (synchronize stays off, as everywhere).
      handle(dataSource).exec(
        'CREATE TABLE "gadgets" ("id" varchar(36) PRIMARY KEY, "madeAt" datetime NOT NULL, ' +
          '"soldAt" datetime, "isBroken" boolean NOT NULL, "weight" integer NOT NULL, "note" varchar(10))',
      );
      sut = new EntityRows(dataSource, Gadget);
    });

    afterEach(async () => {
      await dataSource.destroy();
    });

    it('should list every column the entity declares, in its order', () => {
      expect(sut.names()).toBe('"id", "madeAt", "soldAt", "isBroken", "weight", "note"');
      expect(sut.columns.map((column) => column.propertyName)).toEqual(
        dataSource.getMetadata(Gadget).columns.map((column) => column.propertyName),
      );
    });

    it('should write values TypeORM reads back as the entity', async () => {
      handle(dataSource)
        .prepare(`INSERT INTO "gadgets" (${sut.names()}) VALUES (${sut.placeholders('sqlite')})`)
        .run(...sut.values(GADGET));

      await expect(
        dataSource.getRepository(Gadget).findOneByOrFail({ id: 'g1' }),
      ).resolves.toStrictEqual(GADGET);
    });

    it('should read what TypeORM wrote as TypeORM hydrates it', async () => {
      await dataSource
        .getRepository(Gadget)
        .insert({ ...GADGET, soldAt: new Date('2026-02-03T04:05:06.789Z') });
      const row = handle(dataSource)
        .prepare<[], Record<string, unknown>>(`SELECT ${sut.aliased('g', 'x_')} FROM "gadgets" g`)
        .get();

      expect(sut.hydrate(row ?? {}, 'x_')).toStrictEqual(
        await dataSource.getRepository(Gadget).findOneByOrFail({ id: 'g1' }),
      );
    });

    it('should read some columns only, in the entity order, as TypeORM selects them', async () => {
      const some = new EntityRows(dataSource, Gadget, ['note', 'madeAt', 'id']);
      await dataSource.getRepository(Gadget).insert(GADGET);
      const row = handle(dataSource)
        .prepare<[], Record<string, unknown>>(`SELECT ${some.names()} FROM "gadgets"`)
        .get();

      expect(some.names()).toBe('"id", "madeAt", "note"');
      expect(some.hydrate(row ?? {})).toStrictEqual(
        await dataSource
          .getRepository(Gadget)
          .findOneOrFail({ select: { id: true, madeAt: true, note: true }, where: { id: 'g1' } }),
      );
    });

    it('should refuse a property that has no column', () => {
      expect(() => new EntityRows(dataSource, Gadget, ['id', 'colour' as keyof Gadget])).toThrow(
        'gadgets has no column for one of id, colour',
      );
    });
  });

  describe('in the repositories', () => {
    let dataSource: DataSource;

    beforeEach(async () => {
      dataSource = await createInMemoryDataSource();
    });

    afterEach(async () => {
      await dataSource.destroy();
    });

    const metadataColumns = (
      entity:
        | typeof User
        | typeof RefreshToken
        | typeof AuditEvent
        | typeof Session
        | typeof WebhookQueued,
    ) => dataSource.getMetadata(entity).columns.map((column) => column.databaseName);

    const tokenRepository = () => {
      const unitOfWork = new UnitOfWork(dataSource);
      return new RefreshTokenRepository(
        unitOfWork,
        dataSource,
        new AuditEventRepository(unitOfWork, dataSource, new RandomSource()),
        new SessionRepository(unitOfWork, dataSource),
        new WebhookDeliveryRepository(unitOfWork, dataSource),
      );
    };

    const rotationSql = () => tokenRepository().rotationSql();

    /** A queue fragment's parameters: its columns but the subscription, and the type. */
    const deliveryParameters = () => metadataColumns(WebhookQueued).length - 1 + 1;

    it('should insert every refresh-token column the metadata has, on both engines', () => {
      const sql = rotationSql();

      expect(insertedColumns(sql.sqlite[2])).toEqual(metadataColumns(RefreshToken));
      expect(insertedColumns(sql.postgres)).toEqual(metadataColumns(RefreshToken));
    });

    it('should read every token and owner column the metadata has in a rotation', () => {
      const sql = rotationSql();

      const columnsOf = (statement: string) =>
        handle(dataSource)
          .prepare(statement)
          .columns()
          .map((column) => column.name);

      expect(columnsOf(sql.sqlite[0])).toEqual(metadataColumns(RefreshToken));
      expect(columnsOf(sql.sqlite[1])).toEqual(metadataColumns(User));
      for (const name of [
        ...metadataColumns(RefreshToken).map((column) => `t_${column}`),
        ...metadataColumns(Session).map((column) => `s_${column}`),
        ...metadataColumns(User).map((column) => `u_${column}`),
      ]) {
        expect(sql.postgres).toContain(`AS "${name}"`);
      }
    });

    /** Every `INSERT INTO "table" (...)` of a statement: table name to its columns. */
    const insertsOf = (sql: string): Record<string, string[]> =>
      Object.fromEntries(
        [...sql.matchAll(/INSERT INTO "([a-z_]+)" \(([^)]*)\)/g)].map((match) => [
          match[1],
          match[2].split(',').map((name) => name.trim().replaceAll('"', '')),
        ]),
      );

    const PRECONDITION: Precondition = {
      kind: 'test',
      sql: (first) => `$${first} IS NOT NULL`,
      values: ['x'],
      holds: () => Promise.resolve(true),
    };

    it('should write every column of the account, session, first token and audit row in a session start (decision 0034)', () => {
      const users = new UserRepository(new UnitOfWork(dataSource), dataSource);
      const registration = tokenRepository().startAfterSql(users.insertWrite(buildUser()));

      expect(insertsOf(registration)).toEqual({
        users: metadataColumns(User),
        sessions: metadataColumns(Session),
        refresh_tokens: metadataColumns(RefreshToken),
        auth_events: metadataColumns(AuditEvent),
        webhook_queue: metadataColumns(WebhookQueued),
      });
      // One parameter per column of each row, two for the audit row's user agent (its remembered
      // id or its text, decision 0032); the sessions limit's ending, user, instant and offset;
      // the queued rows' own columns (the subscription comes from its row) and the
      // type they match (decision 0050).
      const parameters = new Set(registration.match(/\$\d+/g));
      expect(parameters.size).toBe(
        metadataColumns(User).length +
          metadataColumns(Session).length +
          metadataColumns(RefreshToken).length +
          6 +
          metadataColumns(AuditEvent).length +
          1 +
          deliveryParameters(),
      );
    });

    it("should give a login's statement its account's parameters, its precondition's, and the rows'", () => {
      const users = new UserRepository(new UnitOfWork(dataSource), dataSource);
      const user = buildUser();
      const write = users.loginStateWrite(user.id, user, {
        failedLoginAttempts: 0,
        lockoutEnd: null,
        lastLoginAt: new Date(),
        passwordHash: 'h',
      });
      const login = tokenRepository().startAfterSql(write, PRECONDITION);

      expect(write.values).toHaveLength(7);
      expect(new Set(login.match(/\$\d+/g)).size).toBe(
        7 +
          1 +
          metadataColumns(Session).length +
          metadataColumns(RefreshToken).length +
          6 +
          metadataColumns(AuditEvent).length +
          1 +
          deliveryParameters(),
      );
      expect(Object.keys(insertsOf(login))).toEqual([
        'sessions',
        'refresh_tokens',
        'auth_events',
        'webhook_queue',
      ]);
    });

    it('should give the revocation five parameters, one per own column of its audit row and two for its user agent', () => {
      const sql = tokenRepository().revokeSql();

      expect(insertsOf(sql)).toEqual({
        auth_events: metadataColumns(AuditEvent),
        webhook_queue: metadataColumns(WebhookQueued),
      });
      // Digest, bearer, the ending's instant, IP and reason; the audit row's owner and details
      // are computed from the rows it found, as are the deliveries' account and session.
      expect(new Set(sql.match(/\$\d+/g)).size).toBe(
        5 + metadataColumns(AuditEvent).length - 2 + 1 + deliveryParameters() - 2,
      );
    });

    it('should give the PostgreSQL rotation its seven parameters and one per own column of its audit row, two for its user agent', () => {
      const parameters = new Set(rotationSql().postgres.match(/\$\d+/g));

      // Digest, at, IP, User-Agent, expiry, owner verified, successor's digest; then the audit
      // row's, but its owner and details, which the statement computes, with two for its user
      // agent (a remembered id, or the text).
      expect(parameters.size).toBe(
        7 + metadataColumns(AuditEvent).length - 2 + 1 + deliveryParameters() - 2,
      );
    });
  });
});
