import { createServer } from 'node:net';
import {
  OAuthClientsService,
  type AddedOAuthClient,
  type NewOAuthClient,
} from '../../src/oauth-server/oauth-clients.service.js';
import type { TestApp, TestAppOptions } from './create-test-app.js';
import { asymmetricSigning } from './signing-keys.js';

/** A loopback port free a moment ago: the issuer must name the port before the app listens. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The options of an app that is an OpenID provider whose issuer is its own loopback address. */
export async function providerAppOptions(
  algorithm = 'ES256',
  extra: Readonly<Record<string, string>> = {},
): Promise<TestAppOptions> {
  const port = await freePort();
  return {
    port,
    environment: asymmetricSigning(algorithm, {
      OAuthServer__Enabled: 'true',
      OAuthServer__Issuer: `http://127.0.0.1:${port}`,
      ...extra,
    }),
  };
}

/** Registers a client as an operator would. */
export function registerClient(t: TestApp, client: NewOAuthClient): Promise<AddedOAuthClient> {
  return t.app.get(OAuthClientsService).add(client);
}
