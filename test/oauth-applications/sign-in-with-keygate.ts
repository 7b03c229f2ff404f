import * as oidc from 'openid-client';

/** What the application keeps between sending the person to Keygate and their return. */
export interface PendingSignIn {
  readonly verifier: string;
  readonly state: string;
  readonly nonce: string;
}

/** Discovery: `issuer` is Keygate's OAuthServer__Issuer (http only on loopback, in development). */
export function keygate(issuer: string, clientId: string, clientSecret: string) {
  return oidc.discovery(
    new URL(issuer),
    clientId,
    undefined,
    oidc.ClientSecretBasic(clientSecret),
    new URL(issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
}

/** Where to send the person, and what to keep (in the application's own session) until they return. */
export async function startSignIn(
  config: oidc.Configuration,
  redirectUri: string,
): Promise<{ url: URL; pending: PendingSignIn }> {
  const pending = {
    verifier: oidc.randomPKCECodeVerifier(),
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
  };
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    // offline_access asks for a refresh token, which Keygate gives with prompt=consent.
    scope: 'openid profile email offline_access',
    prompt: 'consent',
    code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  return { url, pending };
}

/** At the redirect URI: checks everything, redeems the code, reads who signed in. */
export async function finishSignIn(
  config: oidc.Configuration,
  currentUrl: URL,
  pending: PendingSignIn,
) {
  const tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
    pkceCodeVerifier: pending.verifier,
    expectedState: pending.state,
    expectedNonce: pending.nonce,
    idTokenExpected: true,
  });
  const { sub } = tokens.claims()!;
  const profile = await oidc.fetchUserInfo(config, tokens.access_token, sub);
  return { tokens, profile };
}
