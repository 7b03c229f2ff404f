import { describe, expect, it } from '@jest/globals';
import { digestOpaqueToken } from '../common/crypto/opaque-token.js';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import type { OAuthClient } from './entities/oauth-client.entity.js';
import type { OAuthClientRepository } from './oauth-client.repository.js';
import { OAuthClientsService } from './oauth-clients.service.js';

class InMemoryClients {
  readonly rows = new Map<string, OAuthClient>();
  insert(client: OAuthClient): Promise<void> {
    this.rows.set(client.id, { ...client });
    return Promise.resolve();
  }
  byId(id: string): Promise<OAuthClient | null> {
    return Promise.resolve(this.rows.get(id) ?? null);
  }
  all(): Promise<OAuthClient[]> {
    return Promise.resolve([...this.rows.values()]);
  }
  delete(id: string): Promise<boolean> {
    return Promise.resolve(this.rows.delete(id));
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

function build() {
  const rows = new InMemoryClients();
  const sut = new OAuthClientsService(
    rows as unknown as OAuthClientRepository,
    new RandomSource(),
    new FixedClock(),
  );
  return { sut, rows };
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
        createdAt: new Date('2026-11-29T08:00:00.000Z'),
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
});
