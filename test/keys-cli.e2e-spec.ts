import { jest } from '@jest/globals';
import { calculateJwkThumbprint } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtKey } from '../src/common/jwt/jwt-key.js';
import { KeysService } from '../src/keys/keys.service.js';
import { registerUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import { runCliOn, type CliRun } from './utils/cli-process.js';
import { TEST_SECRET_KEY, useTestApp } from './utils/create-test-app.js';
import { UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { FakeClock } from './utils/fake-clock.js';
import { decodeJwt } from './utils/jwt.js';
import { JWKS, ME } from './utils/routes.js';
import { asymmetricSigning } from './utils/signing-keys.js';

// Every test starts real processes; each boots Nest and opens the database.
jest.setTimeout(60_000);

const ES256 = asymmetricSigning('ES256');
const KID = /[A-Za-z0-9_-]{43}/;

describe('keys:* commands of the admin CLI', () => {
  // The CLI reads the real clock; the app starts there too, so both agree on the key states.
  const t = useTestApp(() => ({ clock: new FakeClock(new Date()), environment: ES256 }));
  let cwd: string;

  const cli = (args: readonly string[], env: Record<string, string> = ES256): Promise<CliRun> =>
    runCliOn(t.database, args, cwd, env);
  /** What the instance's timer does every Keys__RefreshIntervalSeconds. */
  const nextReading = (): Promise<void> => t.app.get(KeysService).refresh();
  const jwksKids = async (): Promise<unknown[]> =>
    (await t.get(JWKS)).json<{ keys: { kid: string }[] }>().keys.map((key) => key.kid);

  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'keygate-keys-cli-'));
  });

  afterEach(() => {
    rmSync(cwd, { recursive: true, force: true });
  });

  it('should list the keys and the secret by kid, with their states and no key material', async () => {
    const user = await registerUser(t);
    const kid = decodeJwt(user.accessToken).header.kid as string;

    const result = await cli(['keys:list']);

    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^KID\s+ALG\s+SOURCE\s+STATE\s+CREATED\s+SIGNS FROM\s+RETIRED$/);
    expect(lines[1]).toMatch(
      new RegExp(`^${kid}\\s+ES256\\s+generated\\s+current\\s+\\S+Z\\s+\\S+Z\\s+-$`),
    );
    expect(lines[2]).toMatch(
      new RegExp(`^${jwtKey(TEST_SECRET_KEY).kid}\\s+HS256\\s+secret\\s+previous\\s+-\\s+-\\s+-$`),
    );
    expect(lines).toHaveLength(3);
    expect(result.stdout).not.toMatch(/PRIVATE|"d"|v1\./);
  });

  it('should rotate: the next key is published on the next reading and signs after its lead', async () => {
    const before = await registerUser(t);
    const oldKid = decodeJwt(before.accessToken).header.kid;

    const result = await cli(['keys:rotate']);

    expect(result.code).toBe(0);
    const [, kid, signsFrom] =
      /^Published ES256 key ([A-Za-z0-9_-]{43}) as next; it signs from (\S+Z)\.\n$/.exec(
        result.stdout,
      ) ?? [];
    expect(kid).toMatch(KID);
    await nextReading();
    expect(await jwksKids()).toEqual(expect.arrayContaining([oldKid, kid]));
    t.clock.set(new Date(signsFrom));
    const after = await registerUser(t);
    expect(decodeJwt(after.accessToken).header.kid).toBe(kid);
    expect((await t.get(ME, before.accessToken)).status).toBe(200);
    expect((await auditRows(t.database)).filter((row) => row.ip === 'cli')).toEqual([
      expect.objectContaining({
        type: 'signing_key_created',
        details: expect.objectContaining({ kid, reason: 'rotation' }) as unknown,
      }),
    ]);
  });

  it('should retire the current key: its tokens are refused from the next reading on', async () => {
    const user = await registerUser(t);
    const kid = decodeJwt(user.accessToken).header.kid as string;

    const result = await cli(['keys:retire', kid]);

    expect(result).toMatchObject({
      code: 0,
      stdout: `Retired ES256 key ${kid}: tokens it signed are refused by each instance within Keys__RefreshIntervalSeconds.\n`,
    });
    await nextReading();
    const refused = await t.get(ME, user.accessToken);
    expect({ status: refused.status, body: refused.json() }).toEqual({
      status: 401,
      body: UNAUTHORIZED_BODY,
    });
    const fresh = await registerUser(t);
    expect(decodeJwt(fresh.accessToken).header.kid).not.toBe(kid);
    expect((await t.get(ME, fresh.accessToken)).status).toBe(200);
  });

  it('should retire a key whose kid begins with a dash, as keys:list prints it', async () => {
    // One thumbprint in 64 begins with '-': keys:retire must not read it as an option.
    const { pem, kid } = await keyWithKidStartingWithDash();
    writeFileSync(join(cwd, 'key.pem'), pem);
    expect((await cli(['keys:import', join(cwd, 'key.pem')])).stdout).toContain(kid);

    const result = await cli(['keys:retire', kid]);

    expect(result).toMatchObject({
      code: 0,
      stdout: `Retired ES256 key ${kid}: tokens it signed are refused by each instance within Keys__RefreshIntervalSeconds.\n`,
    });
    const listed = await t.app.get(KeysService).list();
    expect(listed.filter((key) => key.kid === kid)).toEqual([
      expect.objectContaining({ state: 'retired' }),
    ]);
  });

  it('should import a PEM private key as the next key', async () => {
    const file = join(cwd, 'key.pem');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(file, privateKey.export({ format: 'pem', type: 'sec1' }));

    const result = await cli(['keys:import', file]);

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^Imported ES256 key [A-Za-z0-9_-]{43} as next; it signs from \S+Z\.\n$/,
    );
    const listed = await t.app.get(KeysService).list();
    expect(listed.filter((key) => key.source === 'imported')).toEqual([
      expect.objectContaining({ algorithm: 'ES256', state: 'next' }),
    ]);
  });

  it.each([
    [['keys:retire', 'no-such-kid'], ES256, 'keys:retire failed: Clave de firma no encontrada.'],
    [
      ['keys:rotate'],
      {},
      'keys:rotate failed: Las claves de firma necesitan un algoritmo asimétrico en Jwt__SigningAlgorithm.',
    ],
    [
      ['keys:retire', jwtKey(TEST_SECRET_KEY).kid],
      {},
      'keys:retire failed: El secreto HS256 firma los tokens: no se puede retirar.',
    ],
  ])('should refuse %j: exit 1 and the reason', async (args, env, message) => {
    const result = await cli(args, env);

    expect(result).toMatchObject({ code: 1, stdout: '', stderr: `keygate-cli: ${message}\n` });
  });

  it.each([
    [
      'a public key',
      () =>
        generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({
          format: 'pem',
          type: 'spki',
        }),
      'El archivo no contiene una clave privada PEM sin cifrar.',
    ],
    [
      'a P-384 key',
      () =>
        generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({
          format: 'pem',
          type: 'pkcs8',
        }),
      'Tipo de clave no admitido: se aceptan P-256, Ed25519 y RSA.',
    ],
    [
      'an Ed25519 key under ES256',
      () => generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }),
      'La clave no firma con el algoritmo de Jwt__SigningAlgorithm.',
    ],
    [
      'an RSA key of 1024 bits',
      () =>
        generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
          format: 'pem',
          type: 'pkcs8',
        }),
      'La clave RSA debe tener al menos 2048 bits.',
    ],
  ])('should refuse to import %s', async (_label, pem, message) => {
    const file = join(cwd, 'key.pem');
    writeFileSync(file, pem());

    const result = await cli(['keys:import', file]);

    expect(result).toMatchObject({
      code: 1,
      stderr: `keygate-cli: keys:import failed: ${message}\n`,
    });
  });

  it.each([[['keys:retire']], [['keys:import']], [['keys:list', 'extra']]])(
    'should answer %j with a usage error',
    async (args) => {
      const result = await cli(args);

      expect(result.code).toBe(2);
    },
  );
});

/** A P-256 private key in PEM whose RFC 7638 thumbprint (its kid) begins with '-'. */
async function keyWithKidStartingWithDash(): Promise<{ pem: string; kid: string }> {
  for (;;) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const kid = await calculateJwkThumbprint(publicKey.export({ format: 'jwk' }), 'sha256');
    if (kid.startsWith('-')) {
      return { pem: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, kid };
    }
  }
}
