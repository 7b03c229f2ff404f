import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { RandomSource } from '../../common/random/random-source.js';
import { Clock } from '../../common/time/clock.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import type { AuthEvent } from '../../events/auth-event.js';
import { AuthEvents } from '../../events/auth-events.js';
import { FakeClock } from '../../../test/utils/fake-clock.js';
import { AdminKeyRepository } from './admin-key.repository.js';
import { AdminKeysService } from './admin-keys.service.js';
import type { AdminKey } from './entities/admin-key.entity.js';

const MANAGER = {} as EntityManager;
const ORIGIN = { ip: 'cli', userAgent: null, requestId: 'r1' };

describe(AdminKeysService.name, () => {
  let sut: AdminKeysService;
  let stored: AdminKey[];
  let told: AuthEvent[];

  beforeEach(async () => {
    stored = [];
    told = [];
    const moduleRef = await Test.createTestingModule({
      providers: [
        AdminKeysService,
        { provide: Clock, useValue: new FakeClock() },
        RandomSource,
        {
          provide: UnitOfWork,
          useValue: { transaction: <T>(work: (m: EntityManager) => Promise<T>) => work(MANAGER) },
        },
        {
          provide: AuthEvents,
          useValue: {
            record: (_m: EntityManager, event: AuthEvent) => {
              told.push(event);
              return Promise.resolve();
            },
          },
        },
        {
          provide: AdminKeyRepository,
          useValue: {
            insert: (_m: EntityManager, key: AdminKey) => {
              if (stored.some((k) => k.name === key.name)) {
                return Promise.resolve(false);
              }
              stored.push(key);
              return Promise.resolve(true);
            },
            findByDigest: (digest: string) =>
              Promise.resolve(stored.find((k) => k.keyDigest === digest) ?? null),
            anyActive: () => Promise.resolve(stored.some((k) => k.revokedAt === null)),
            revoke: (_m: EntityManager, name: string, at: Date) => {
              const key = stored.find((k) => k.name === name && k.revokedAt === null);
              if (key !== undefined) {
                key.revokedAt = at;
              }
              return Promise.resolve(key ?? null);
            },
          },
        },
      ],
    }).compile();
    sut = moduleRef.get(AdminKeysService);
  });

  it('should show the secret once and store only its digest, with the scopes in their order', async () => {
    const { key, secret } = await sut.create(
      'tool',
      ['sessions:write', ' users:read', 'users:read'],
      ORIGIN,
    );

    expect(secret).toMatch(/^kga_[A-Za-z0-9_-]{43}$/);
    expect(key.scopes).toEqual(['users:read', 'sessions:write']);
    expect(JSON.stringify(stored)).not.toContain(secret.slice(4));
    expect(stored[0].keyDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(told).toEqual([
      {
        type: 'admin_key_created',
        userId: null,
        adminKeyId: key.id,
        adminKeyName: 'tool',
        scopes: ['users:read', 'sessions:write'],
      },
    ]);
    expect(JSON.stringify(told)).not.toContain(secret);
  });

  it('should authenticate the secret, and nothing else, until it is revoked', async () => {
    const { key, secret } = await sut.create('tool', ['audit:read'], ORIGIN);
    const flipped = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');

    await expect(sut.authenticate(secret)).resolves.toEqual({
      id: key.id,
      name: 'tool',
      scopes: ['audit:read'],
    });
    await expect(sut.authenticate(flipped)).resolves.toBeNull();
    await expect(sut.authenticate(secret.slice(4))).resolves.toBeNull();
    await expect(sut.authenticate('')).resolves.toBeNull();

    await sut.revoke('tool', ORIGIN);
    await expect(sut.authenticate(secret)).resolves.toBeNull();
    await expect(sut.anyActive()).resolves.toBe(false);
  });

  it.each<[string, string[], string]>([
    [
      'an unknown scope',
      ['users:read', 'keys:delete'],
      'Unknown scope "keys:delete"; the scopes are users:read, users:write, sessions:write, audit:read, keys:read, keys:write, webhooks:read, webhooks:write, oauth-clients:read, oauth-clients:write, oauth-consents:read, oauth-consents:write.',
    ],
    [
      'no scope',
      [' ', ''],
      'A key needs at least one scope: users:read, users:write, sessions:write, audit:read, keys:read, keys:write, webhooks:read, webhooks:write, oauth-clients:read, oauth-clients:write, oauth-consents:read, oauth-consents:write.',
    ],
  ])('should refuse %s', async (_name, scopes, message) => {
    await expect(sut.create('tool', scopes, ORIGIN)).rejects.toThrow(message);
    expect(stored).toEqual([]);
  });

  it.each(['', 'has space', '-dash-first', 'x'.repeat(65), 'tab\tname', 'ünïcode'])(
    'should refuse the name %j',
    async (name) => {
      await expect(sut.create(name, ['users:read'], ORIGIN)).rejects.toThrow(
        'The key name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit.',
      );
    },
  );

  it('should refuse a taken name, and revoking an unknown one', async () => {
    await sut.create('tool', ['users:read'], ORIGIN);

    await expect(sut.create('tool', ['users:read'], ORIGIN)).rejects.toThrow(
      'An admin key named tool exists already (names are never reused).',
    );
    await expect(sut.revoke('other', ORIGIN)).rejects.toThrow(
      'No unrevoked admin key is named other.',
    );
  });
});
