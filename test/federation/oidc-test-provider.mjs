// A real OpenID provider for the federation tests: panva's oidc-provider (certified), started as a
// child process on loopback (it needs Node >= 22). Reads its settings as JSON from argv[2] and
// prints `{"issuer": ...}` on stdout once listening. The test is the browser: it sets who signs in
// next (POST /__next-login with the account's claims) and follows the redirects.
//
// Settings: { clientId, clientSecret, redirectUris: [..], lie?: <below>, delaySeconds?, interactive?: true }
//   expired:         the provider's clock runs two hours behind, so its ID tokens (an hour long) expired an hour ago.
//   wrong-signature: the JWKS it publishes is not the key it signs with.
//   wrong-audience:  its token endpoint's ID token names another client in `aud` (signed with its real key).
//   wrong-nonce:     ... carries a `nonce` other than the flow's (signed with its real key).
//   wrong-issuer:    ... carries an `iss` other than the discovered issuer (signed with its real key).
//   unsigned:        ... is re-issued with `alg: none` and no signature.
//   down:            its discovery document names a token endpoint where nothing listens (connection refused).
//   slow:            its token endpoint answers only after `delaySeconds` (30 by default).
//   interactive:     the provider's own sign-in and consent pages (oidc-provider's devInteractions)
//                    for a real browser; the person types the `sub` whose claims nextLogin registered.
import { createPrivateKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import Provider from 'oidc-provider';

const settings = JSON.parse(process.argv[2] ?? '{}');

if (settings.lie === 'expired') {
  const realNow = Date.now.bind(Date);
  Date.now = () => realNow() - 2 * 3_600_000;
}

function signingJwk() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: 'key-1', use: 'sig', alg: 'RS256' };
}
const jwk = signingJwk();
const publicOf = ({ kty, n, e, kid, use, alg }) => ({ kty, n, e, kid, use, alg });
const published = settings.lie === 'wrong-signature' ? publicOf(signingJwk()) : publicOf(jwk);

/** The ID token re-issued with the lie's claims, signed with the real key (or with `none`). */
function rewrittenIdToken(idToken) {
  const [header, payload] = idToken.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const changed = {
    'wrong-audience': { aud: 'another-client', azp: undefined },
    'wrong-nonce': { nonce: 'a-nonce-of-another-flow' },
    'wrong-issuer': { iss: 'https://impostor.example.com' },
  }[settings.lie];
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = encode({ ...claims, ...changed });
  if (settings.lie === 'unsigned') {
    return `${encode({ alg: 'none' })}.${body}.`;
  }
  const input = `${header}.${body}`;
  const signature = sign(
    'sha256',
    Buffer.from(input),
    createPrivateKey({ key: jwk, format: 'jwk' }),
  );
  return `${input}.${signature.toString('base64url')}`;
}
const REWRITES_ID_TOKEN = ['wrong-audience', 'wrong-nonce', 'wrong-issuer', 'unsigned'];

/** A loopback port nothing listens on (taken, then released). */
async function closedPort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
const deadPort = settings.lie === 'down' ? await closedPort() : null;

/** The claims of the account that signs in next, by subject. */
const accounts = new Map();
let nextLogin = null;

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: settings.clientId,
        client_secret: settings.clientSecret,
        redirect_uris: settings.redirectUris,
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [jwk] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: settings.interactive === true } },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
    },
    findAccount: (_ctx, sub) => {
      const claims = accounts.get(sub);
      return claims === undefined ? undefined : { accountId: sub, claims: () => claims };
    },
    cookies: { keys: ['test-cookie-key-0123456789'] },
  });
  provider.proxy = false;
  provider.use(async (ctx, next) => {
    if (settings.lie === 'slow' && ctx.path === '/token') {
      await sleep((settings.delaySeconds ?? 30) * 1000);
    }
    await next();
    if (REWRITES_ID_TOKEN.includes(settings.lie) && ctx.path === '/token' && ctx.body?.id_token) {
      ctx.body = { ...ctx.body, id_token: rewrittenIdToken(ctx.body.id_token) };
    }
    if (deadPort !== null && ctx.path === '/.well-known/openid-configuration') {
      ctx.body = { ...ctx.body, token_endpoint: `http://127.0.0.1:${deadPort}/token` };
    }
  });
  const handle = provider.callback();
  server.on('request', async (req, res) => {
    try {
      if (req.url === '/__next-login' && req.method === 'POST') {
        let body = '';
        for await (const chunk of req) {
          body += chunk;
        }
        const claims = JSON.parse(body);
        if (claims.deny === true) {
          nextLogin = null;
        } else {
          accounts.set(claims.sub, claims);
          nextLogin = claims.sub;
        }
        res.writeHead(204).end();
        return;
      }
      if (req.url === '/jwks' && settings.lie === 'wrong-signature') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: [published] }));
        return;
      }
      if (req.url?.startsWith('/interaction/') && settings.interactive !== true) {
        const details = await provider.interactionDetails(req, res);
        if (details.prompt.name === 'login') {
          if (nextLogin === null) {
            await provider.interactionFinished(req, res, {
              error: 'access_denied',
              error_description: 'the person said no',
            });
            return;
          }
          await provider.interactionFinished(req, res, { login: { accountId: nextLogin } });
          return;
        }
        const grant = new provider.Grant({
          accountId: details.session.accountId,
          clientId: details.params.client_id,
        });
        grant.addOIDCScope(String(details.params.scope));
        const grantId = await grant.save();
        await provider.interactionFinished(
          req,
          res,
          { consent: { grantId } },
          { mergeWithLastSubmission: true },
        );
        return;
      }
      handle(req, res);
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
  process.stdout.write(`${JSON.stringify({ issuer, id: randomUUID() })}\n`);
});
