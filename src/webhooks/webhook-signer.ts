import { createHmac } from 'node:crypto';
import type { RandomSource } from '../common/random/random-source.js';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** Standard Webhooks asks for 24 to 64 bytes; 32 is HMAC-SHA256's own block of strength. */
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(random: RandomSource): string {
  return `${WEBHOOK_SECRET_PREFIX}${random.bytes(SECRET_BYTES).toString('base64')}`;
}

/**
 * The `webhook-signature` header of the Standard Webhooks specification: `v1,` and the base64
 * HMAC-SHA256, under the secret's bytes, of `<webhook-id>.<webhook-timestamp>.<body>`.
 */
export function webhookSignature(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = Buffer.from(
    secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret,
    'base64',
  );
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

/** The three headers of a signed delivery, signed at `at`. */
export function webhookHeaders(
  secret: string,
  id: string,
  at: Date,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature(secret, id, timestamp, body),
  };
}
