import * as oidc from 'openid-client';

/** Discovery for a client without a browser of its own: a command-line tool or a service. */
function discover(issuer: string, clientId: string, auth: oidc.ClientAuth) {
  return oidc.discovery(
    new URL(issuer),
    clientId,
    undefined,
    auth,
    new URL(issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
}

/** A command-line tool (a public client registered with --grant device_code). */
export function cliClient(issuer: string, clientId: string) {
  return discover(issuer, clientId, oidc.None());
}

/** Step 1: what to show the person, who opens the address in any browser and types the code. */
export async function startDeviceSignIn(config: oidc.Configuration) {
  const device = await oidc.initiateDeviceAuthorization(config, {
    scope: 'openid offline_access',
  });
  const message = `Abra ${device.verification_uri} y escriba el código ${device.user_code}`;
  return { device, message };
}

/** Step 2: polls (every `interval` seconds, slower on slow_down) until the person decided. */
export function finishDeviceSignIn(
  config: oidc.Configuration,
  device: oidc.DeviceAuthorizationResponse,
) {
  return oidc.pollDeviceAuthorizationGrant(config, device);
}

/** A service (a confidential client registered with --grant client_credentials). */
export async function serviceToken(
  issuer: string,
  clientId: string,
  clientSecret: string,
  resource: string,
  scope: string,
) {
  const config = await discover(issuer, clientId, oidc.ClientSecretBasic(clientSecret));
  return oidc.clientCredentialsGrant(config, { resource, scope });
}
