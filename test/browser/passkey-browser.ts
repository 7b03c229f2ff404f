import type { Page } from 'playwright-core';
import type { ServerProcess } from '../utils/spawn-server.js';
import { startBrowserKeygate } from './keygate-server.js';

// What the passkey proofs in Chromium share: the built service with passkeys on for pages of
// localhost (an IP address cannot be a relying party id), and a virtual authenticator of the
// Chrome DevTools Protocol, so that the browser's own WebAuthn does the ceremony.

const MFA_KEY = Buffer.alloc(32, 0x5c).toString('base64');

/**
 * The built service on a database file in `directory`, allowing `allowedOrigins`
 * (comma-separated) and accepting passkeys made on `passkeyOrigin` only.
 */
export function startPasskeyKeygate(
  directory: string,
  allowedOrigins: string,
  passkeyOrigin: string,
): Promise<ServerProcess> {
  return startBrowserKeygate(directory, allowedOrigins, {
    Passkeys__RpId: 'localhost',
    Passkeys__Origins: passkeyOrigin,
    Mfa__EncryptionKeys: MFA_KEY,
  });
}

/** A virtual platform authenticator (resident keys, user verification) for `page`. */
export async function addVirtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}
