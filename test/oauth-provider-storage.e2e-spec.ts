import { errors } from 'oidc-provider';
import { digestOpaqueToken } from '../src/common/crypto/opaque-token.js';
import { OAuthArtefact } from '../src/oauth-server/entities/oauth-artefact.entity.js';
import { ArtefactAdapter, artefactDigest } from '../src/oauth-server/storage/artefact-adapter.js';
import { OAuthArtefactRepository } from '../src/oauth-server/storage/oauth-artefact.repository.js';
import { ArtefactCleanup } from '../src/oauth-server/storage/artefact-cleanup.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { providerAppOptions, registerClient } from './utils/oauth-provider.js';

// Issue 39, part 2: the provider's storage over oauth_artefacts, on SQLite and (npm run test:pg)
// PostgreSQL, with two instances sharing the database.

let t: TestApp;
let second: TestApp;
beforeAll(async () => {
  // Small purge batches, so that one purge takes several.
  t = await createTestApp(await providerAppOptions('ES256', { TokenCleanup__BatchSize: '3' }));
  second = await createTestApp({ ...(await providerAppOptions()), database: t.database });
});
afterAll(async () => {
  await second?.close();
  await t?.close();
});

let aliases = 0;

function adapterOf(app: TestApp, kind: string, route?: () => string): ArtefactAdapter {
  return new ArtefactAdapter(
    kind,
    app.app.get(OAuthArtefactRepository),
    app.clock,
    errors.InvalidGrant,
    undefined,
    route,
    () => `alias-id-${++aliases}-0123456789abcdefghijklmnopqrstuvwxyz`,
  );
}

const CODE_ID = 'code-value-0123456789-abcdefghijklmnopqrstu';

describe('OAuth server: storage of artefacts', () => {
  it('should key a row by the digest of its id, store no copy of a secret, and give the id back', async () => {
    const adapter = adapterOf(t, 'Interaction');
    const id = 'interaction-id-0123456789abcdef';
    await adapter.upsert(
      id,
      {
        jti: id,
        kind: 'Interaction',
        userCode: 'WDJB-MJHT',
        session: { uid: 'session-uid', cookie: 'session-cookie-value', accountId: 'a' },
        exp: 1,
      },
      60,
    );
    const rows = await t.dataSource.getRepository(OAuthArtefact).findBy({ kind: 'Interaction' });
    expect(rows).toHaveLength(1);
    expect(rows[0].idDigest).toBe(artefactDigest(id));
    expect(rows[0].userCodeDigest).toBe(artefactDigest('WDJB-MJHT'));
    const stored = JSON.stringify(rows);
    for (const secret of [id, 'WDJB-MJHT', 'session-cookie-value']) {
      expect(stored).not.toContain(secret);
    }
    expect(await adapter.find(id)).toEqual({
      jti: id,
      kind: 'Interaction',
      session: { uid: 'session-uid', accountId: 'a' },
      exp: 1,
    });
    expect(await adapter.find('another-id')).toBeUndefined();
    expect(await adapter.findByUserCode('WDJB-MJHT')).toMatchObject({ userCode: 'WDJB-MJHT' });
  });

  it('should give a device code found by its user code an alias that saves to its row, and never redeems it', async () => {
    let route = 'code_verification';
    const adapter = adapterOf(t, 'DeviceCode', () => route);
    const deviceCode = 'device-code-0123456789-abcdefghijklmnopqrst';
    await adapter.upsert(
      deviceCode,
      { jti: deviceCode, kind: 'DeviceCode', userCode: 'BCDF-GHJK', clientId: 'c', exp: 2 },
      600,
    );
    const found = await adapter.findByUserCode('BCDF-GHJK');
    expect(found).toMatchObject({ kind: 'DeviceCode', userCode: 'BCDF-GHJK', clientId: 'c' });
    const alias = String(found?.jti);
    expect(alias).not.toBe(deviceCode);
    // The library saves what it found by the alias: the device code's own row changes.
    await adapter.upsert(alias, { ...found, jti: alias, accountId: 'person' }, 600);
    expect(await adapter.find(deviceCode)).toMatchObject({ jti: deviceCode, accountId: 'person' });
    // The user code still finds it.
    expect(await adapter.findByUserCode('BCDF-GHJK')).toMatchObject({ accountId: 'person' });
    expect(await adapter.find(alias)).toMatchObject({ jti: alias, accountId: 'person' });
    // At the token endpoint only the device code itself leads to the row.
    route = 'token';
    expect(await adapter.find(alias)).toBeUndefined();
    expect(await adapter.find(deviceCode)).toMatchObject({ accountId: 'person' });
    const stored = JSON.stringify(
      await t.dataSource.getRepository(OAuthArtefact).findBy({ kind: 'DeviceCode' }),
    );
    for (const secret of [deviceCode, alias, 'BCDF-GHJK']) {
      expect(stored).not.toContain(secret);
    }
  });

  it("should not find a row once its lifetime is over on Keygate's clock", async () => {
    const adapter = adapterOf(t, 'AccessToken');
    await adapter.upsert('short-lived-token-id', { jti: 'short-lived-token-id' }, 60);
    expect(await adapter.find('short-lived-token-id')).toBeDefined();
    t.clock.advance(61_000);
    expect(await adapter.find('short-lived-token-id')).toBeUndefined();
  });

  it('should let exactly one of twenty simultaneous uses of a code through, on two instances, and revoke its grant', async () => {
    const grantId = 'grant-of-the-raced-code';
    const codes = adapterOf(t, 'AuthorizationCode');
    await codes.upsert(CODE_ID, { jti: CODE_ID, grantId, clientId: 'c' }, 60);
    await adapterOf(t, 'AccessToken').upsert('token-of-the-grant', { jti: 'x', grantId }, 60);
    await adapterOf(t, 'Grant').upsert(
      grantId,
      { jti: grantId, accountId: 'a', clientId: 'c' },
      60,
    );
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        adapterOf(i % 2 === 0 ? t : second, 'AuthorizationCode').consume(CODE_ID),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refusals = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refusals).toHaveLength(19);
    for (const refusal of refusals) {
      expect(refusal.reason).toBeInstanceOf(errors.InvalidGrant);
    }
    // The losers were reuses: the grant's artefacts are gone.
    expect(await t.dataSource.getRepository(OAuthArtefact).countBy({ grantId })).toBe(0);
    expect(await adapterOf(t, 'Grant').find(grantId)).toBeUndefined();
  });

  it('should say a used code is used, and keep it used when the library saves it again', async () => {
    const codes = adapterOf(t, 'AuthorizationCode');
    await codes.upsert('used-code', { jti: 'used-code', clientId: 'c' }, 60);
    await codes.consume('used-code');
    expect(await codes.find('used-code')).toMatchObject({ consumed: expect.any(Number) });
    await codes.upsert('used-code', { jti: 'used-code', clientId: 'c' }, 60);
    expect(await codes.find('used-code')).toMatchObject({ consumed: expect.any(Number) });
  });

  it('should delete every artefact of a revoked grant and nothing else', async () => {
    await adapterOf(t, 'RefreshToken').upsert('rt-1', { grantId: 'g-1' }, 60);
    await adapterOf(t, 'AccessToken').upsert('at-1', { grantId: 'g-1' }, 60);
    await adapterOf(t, 'AccessToken').upsert('at-2', { grantId: 'g-2' }, 60);
    await adapterOf(t, 'Grant').revokeByGrantId('g-1');
    expect(await adapterOf(t, 'RefreshToken').find('rt-1')).toBeUndefined();
    expect(await adapterOf(t, 'AccessToken').find('at-1')).toBeUndefined();
    expect(await adapterOf(t, 'AccessToken').find('at-2')).toBeDefined();
  });
});

describe('OAuth server: the purge of expired artefacts', () => {
  it('should delete the artefacts past their expiry, in batches, and keep the others', async () => {
    const repository = t.dataSource.getRepository(OAuthArtefact);
    await repository.clear();
    for (let i = 0; i < 7; i++) {
      await adapterOf(t, 'AccessToken').upsert(`expiring-${i}`, { grantId: 'g' }, 60);
    }
    await adapterOf(t, 'RefreshToken').upsert('lasting', { grantId: 'g' }, 3600);
    t.clock.advance(61_000);
    expect(await t.app.get(ArtefactCleanup).purgeExpired()).toBe(7);
    expect(await repository.count()).toBe(1);
    expect(await adapterOf(t, 'RefreshToken').find('lasting')).toBeDefined();
  });
});

describe('OAuth server: client authentication against secret digests', () => {
  const tokenRequest = (clientId: string, secret: string) =>
    t.request('/oauth/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      },
      body: 'grant_type=authorization_code&code=unknown-code&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb',
    });

  it('should authenticate the secret shown at registration, and refuse another one and the stored digest', async () => {
    const client = await registerClient(t, {
      name: 'App',
      redirectUris: ['https://app.example.com/cb'],
    });
    const secret = client.clientSecret ?? '';

    const right = await tokenRequest(client.clientId, secret);
    expect({ status: right.status, body: right.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'grant request is invalid' },
    });

    const invalidClient = {
      status: 401,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
    };
    for (const wrong of [
      `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`,
      digestOpaqueToken(secret),
    ]) {
      const response = await tokenRequest(client.clientId, wrong);
      expect({ status: response.status, body: response.json() }).toEqual(invalidClient);
    }
  });
});
