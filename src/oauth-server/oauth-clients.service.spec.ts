import { describe, expect, it } from '@jest/globals';
import { digestOpaqueToken } from '../common/crypto/opaque-token.js';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import type { AuthEvents } from '../events/auth-events.js';
import type { OAuthClient } from './entities/oauth-client.entity.js';
import type { OAuthClientRepository } from './oauth-client.repository.js';
import { OAuthClientsService } from './oauth-clients.service.js';

class InMemoryClients {
  readonly rows = new Map<string, OAuthClient>();
  async insert(client: OAuthClient, alongside: (m: never) => Promise<void>): Promise<void> {
    this.rows.set(client.id, { ...client });
    await alongside(undefined as never);
  }
  byId(id: string): Promise<OAuthClient | null> {
    return Promise.resolve(this.rows.get(id) ?? null);
  }
  all(): Promise<OAuthClient[]> {
    return Promise.resolve([...this.rows.values()]);
  }
  async delete(id: string, alongside: (m: never) => Promise<void>): Promise<boolean> {
    if (!this.rows.delete(id)) {
      return false;
    }
    await alongside(undefined as never);
    return true;
  }
  replaceSecretDigest(id: string, secretDigest: string): Promise<boolean> {
    const row = this.rows.get(id);
    if (row === undefined || row.isPublic) {
      return Promise.resolve(false);
    }
    row.secretDigest = secretDigest;
    return Promise.resolve(true);
  }
}

class FixedClock extends Clock {
  override now(): Date {
    return new Date('2026-11-29T08:00:00.000Z');
  }
}

/** The events the service records, by type and client. */
class RecordedEvents {
  readonly recorded: { type: string; clientId: string }[] = [];
  record(_manager: unknown, event: { type: string; clientId: string }): Promise<void> {
    this.recorded.push({ type: event.type, clientId: event.clientId });
    return Promise.resolve();
  }
}

function build() {
  const rows = new InMemoryClients();
  const events = new RecordedEvents();
  const sut = new OAuthClientsService(
    rows as unknown as OAuthClientRepository,
    new RandomSource(),
    new FixedClock(),
    events as unknown as AuthEvents,
  );
  return { sut, rows, events };
}

describe(OAuthClientsService.name, () => {
  it('should store only the digest of a confidential client secret and show the secret once', async () => {
    const { sut, rows } = build();
    const added = await sut.add({ name: 'Grafana', redirectUris: ['https://g.example.com/cb'] });
    expect(added.clientSecret).toMatch(/^kgcs_[A-Za-z0-9_-]{43}$/);
    const row = rows.rows.get(added.clientId);
    expect(row?.secretDigest).toBe(digestOpaqueToken(added.clientSecret ?? ''));
    expect(JSON.stringify(row)).not.toContain(added.clientSecret);
    expect(await sut.list()).toEqual([
      {
        clientId: added.clientId,
        name: 'Grafana',
        redirectUris: ['https://g.example.com/cb'],
        postLogoutRedirectUris: [],
        isPublic: false,
        scopes: ['openid', 'profile', 'email', 'offline_access'],
        grantTypes: ['authorization_code'],
        createdAt: new Date('2026-11-29T08:00:00.000Z'),
        isSelfRegistered: false,
      },
    ]);
  });

  it('should verify a secret, and refuse another, a public client and an unknown client', async () => {
    const { sut } = build();
    const added = await sut.add({ name: 'App', redirectUris: ['https://a.example.com/cb'] });
    const secret = added.clientSecret ?? '';
    expect(await sut.verifySecret(added.clientId, secret)).toBe(true);
    expect(await sut.verifySecret(added.clientId, `${secret.slice(0, -1)}A`)).toBe(
      secret.endsWith('A'),
    );
    expect(await sut.verifySecret('00000000-0000-4000-8000-000000000000', secret)).toBe(false);
    const publicClient = await sut.add({
      name: 'SPA',
      redirectUris: ['https://spa.example.com/cb'],
      isPublic: true,
    });
    expect(publicClient.clientSecret).toBeNull();
    expect(await sut.verifySecret(publicClient.clientId, secret)).toBe(false);
  });

  it('should make the old secret stop working when it is rotated', async () => {
    const { sut } = build();
    const added = await sut.add({ name: 'App', redirectUris: ['https://a.example.com/cb'] });
    const rotated = await sut.rotateSecret(added.clientId);
    expect(rotated.clientSecret).not.toBe(added.clientSecret);
    expect(await sut.verifySecret(added.clientId, added.clientSecret ?? '')).toBe(false);
    expect(await sut.verifySecret(added.clientId, rotated.clientSecret)).toBe(true);
  });

  it('should keep the scopes in their order and each once', async () => {
    const { sut } = build();
    const added = await sut.add({
      name: 'App',
      redirectUris: ['https://a.example.com/cb'],
      scopes: ['email', 'openid', 'email'],
    });
    expect(added.scopes).toEqual(['openid', 'email']);
  });

  it('should record a client added and a client removed, and nothing for an unknown client', async () => {
    const { sut, events } = build();
    const added = await sut.add({ name: 'Grafana', redirectUris: ['https://g.example.com/cb'] });
    await sut.remove(added.clientId);
    await expect(sut.remove(added.clientId)).rejects.toThrow('Cliente OAuth no encontrado.');
    expect(events.recorded).toEqual([
      { type: 'oauth_client_added', clientId: added.clientId },
      { type: 'oauth_client_removed', clientId: added.clientId },
    ]);
  });
});
