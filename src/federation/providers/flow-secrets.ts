import { createHash, createHmac } from 'node:crypto';
import type { FlowSecrets } from './identity-provider.js';

/**
 * The secrets of a flow, from its state (32 random bytes, base64url): the PKCE verifier and the
 * nonce are HMACs of it, so only the state's digest is stored and whoever does not hold the
 * state can derive neither.
 */
export function flowSecretsOf(state: string): FlowSecrets {
  const derive = (label: string) => createHmac('sha256', state).update(label).digest('base64url');
  return { state, codeVerifier: derive('pkce'), nonce: derive('nonce') };
}

/** BASE64URL(SHA-256(verifier)), RFC 7636's S256. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
