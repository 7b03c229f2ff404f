import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';

/** A signing key of the test issuer, and its public half as the key set publishes it. */
export interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

export async function signingKey(kid: string, alg = 'ES256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A document the issuer serves at a path: a status and a JSON body. */
export interface Served {
  readonly status: number;
  readonly body: unknown;
}

/**
 * An authorization server on 127.0.0.1 as far as a resource server sees one: its RFC 8414
 * metadata (at `/.well-known/oauth-authorization-server{path}`) and its key set (`/jwks`), both
 * changeable by the test, and the paths it was asked for, in order.
 */
export class LoopbackIssuer {
  readonly requests: string[] = [];
  readonly documents = new Map<string, Served>();
  published: SigningKey[] = [];

  private readonly server: Server = createServer((request, response) => {
    const url = request.url ?? '/';
    this.requests.push(url);
    const served =
      url === '/jwks'
        ? { status: 200, body: { keys: this.published.map((key) => key.jwk) } }
        : this.documents.get(url);
    response.writeHead(served?.status ?? 404, { 'content-type': 'application/json' });
    response.end(JSON.stringify(served?.body ?? { error: 'not_found' }));
  });
  origin = '';
  issuer = '';

  private constructor() {}

  static async start(path = ''): Promise<LoopbackIssuer> {
    const self = new LoopbackIssuer();
    await new Promise<void>((resolve) => self.server.listen(0, '127.0.0.1', resolve));
    self.origin = `http://127.0.0.1:${(self.server.address() as AddressInfo).port}`;
    self.issuer = `${self.origin}${path}`;
    self.documents.set(`/.well-known/oauth-authorization-server${path}`, {
      status: 200,
      body: { issuer: self.issuer, jwks_uri: `${self.origin}/jwks` },
    });
    return self;
  }

  /** How many times the key set was fetched. */
  get keySetFetches(): number {
    return this.requests.filter((url) => url === '/jwks').length;
  }

  /** A token signed by `key`: this issuer's, valid for five minutes, unless `claims` say else. */
  mint(key: SigningKey, claims: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: this.issuer, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...header })
      .sign(key.privateKey);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
