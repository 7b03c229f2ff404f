import { RandomSource } from '../common/random/random-source.js';
import type { AppConfig } from '../config/app-config.js';
import { OutboxSecrets } from './outbox-secrets.js';

const OLD = 'old-signing-secret-0123456789abcdef-XYZ';
const NEW = 'new-signing-secret-0123456789abcdef-XYZ';
const TOKEN = 'kq3V0S2yq8m1bZcR5x0G6uUj4tQnH7wEoLdP9aFsYiM';

function secretsWith(secret: string, previousSecrets: string[] = []): OutboxSecrets {
  return new OutboxSecrets(
    { jwt: { secret, previousSecrets } } as unknown as AppConfig,
    new RandomSource(),
  );
}

describe(OutboxSecrets.name, () => {
  it('should open what it sealed, and never hold the token in the sealed text', () => {
    const sut = secretsWith(NEW);

    const sealed = sut.seal(TOKEN);

    expect(sealed).not.toContain(TOKEN);
    expect(sealed).not.toContain(Buffer.from(TOKEN).toString('base64url'));
    expect(sut.open(sealed)).toBe(TOKEN);
  });

  it('should seal the same token differently every time', () => {
    const sut = secretsWith(NEW);

    expect(sut.seal(TOKEN)).not.toBe(sut.seal(TOKEN));
  });

  it('should open a token sealed before the secret was rolled, while the old one is kept', () => {
    const sealed = secretsWith(OLD).seal(TOKEN);

    expect(secretsWith(NEW, [OLD]).open(sealed)).toBe(TOKEN);
    expect(secretsWith(NEW).open(sealed)).toBeNull();
  });

  it.each([
    [
      'altered text',
      (sealed: string) => sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA'),
    ],
    ['another format', (sealed: string) => sealed.replace(/^v1\./, 'v2.')],
    ['a missing part', (sealed: string) => sealed.split('.').slice(0, 4).join('.')],
    ['an extra part', (sealed: string) => `${sealed}.x`],
  ])('should refuse %s', (_case, tamper) => {
    const sut = secretsWith(NEW);

    expect(sut.open(tamper(sut.seal(TOKEN)))).toBeNull();
  });
});
