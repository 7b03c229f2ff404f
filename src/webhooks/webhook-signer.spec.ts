import { Webhook } from 'standardwebhooks';
import { RandomSource } from '../common/random/random-source.js';
import { newWebhookSecret, webhookHeaders, webhookSignature } from './webhook-signer.js';

describe('webhook signer', () => {
  const secret = newWebhookSecret(new RandomSource());
  const body = JSON.stringify({
    type: 'registered',
    timestamp: '2026-01-01T00:00:00.000Z',
    data: { accountId: 'ü' },
  });

  it('should make a whsec_ secret of 32 random bytes', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret(new RandomSource())).not.toBe(secret);
  });

  it('should sign as the standardwebhooks library signs, byte for byte', () => {
    const at = new Date('2026-05-06T07:08:09.999Z');
    const reference = new Webhook(secret).sign('msg_1', at, body);

    expect(webhookSignature(secret, 'msg_1', Math.floor(at.getTime() / 1000), body)).toBe(
      reference,
    );
  });

  it('should give headers that the standardwebhooks library verifies, and that fail once altered', () => {
    const headers = webhookHeaders(secret, 'msg_2', new Date(), body);
    const receiver = new Webhook(secret);

    expect(receiver.verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => receiver.verify(body.replace('registered', 'login_succeeded'), headers)).toThrow();
    expect(() => receiver.verify(body, { ...headers, 'webhook-id': 'msg_3' })).toThrow();
    expect(() => new Webhook(newWebhookSecret(new RandomSource())).verify(body, headers)).toThrow();
  });

  it('should be refused by the library once the timestamp is more than five minutes old', () => {
    const headers = webhookHeaders(secret, 'msg_4', new Date(Date.now() - 6 * 60_000), body);

    expect(() => new Webhook(secret).verify(body, headers)).toThrow('Message timestamp too old');
  });
});
