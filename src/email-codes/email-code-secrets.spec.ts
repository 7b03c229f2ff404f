import { createHmac, hkdfSync } from 'node:crypto';
import { SequenceRandomSource } from '../../test/utils/fake-random.js';
import { RandomSource } from '../common/random/random-source.js';
import type { AppConfig } from '../config/app-config.js';
import { EmailCodeSecrets } from './email-code-secrets.js';

const SECRET = 'unit-test-secret-0123456789abcdef-XYZ';
const ROW = '00000000-0000-4000-8000-000000000001';

function configWith(codeLength: number): AppConfig {
  return { jwt: { secret: SECRET }, emailCode: { codeLength } } as AppConfig;
}

/** Hands out the given 48-bit draws, then fails: a test knows every value it used. */
class DrawsRandomSource extends RandomSource {
  constructor(private readonly draws: number[]) {
    super();
  }

  override bytes(size: number): Buffer {
    // The link's token: 32 bytes of zeros is as good as any for these tests.
    const draw = size === 6 ? this.draws.shift() : undefined;
    if (draw === undefined) {
      return Buffer.alloc(size);
    }
    const bytes = Buffer.alloc(size);
    bytes.writeUIntBE(draw, 0, size);
    return bytes;
  }
}

describe(EmailCodeSecrets.name, () => {
  it('should draw codes of the configured length, zeros kept in front', () => {
    const sut = new EmailCodeSecrets(configWith(6), new DrawsRandomSource([42, 1_000_000 + 7]));

    expect(sut.create(ROW).code).toBe('000042');
    expect(sut.create(ROW).code).toBe('000007');
  });

  it('should draw again past the last whole multiple of 10^length, so no code is likelier', () => {
    const range = 2 ** 48;
    const limit = range - (range % 10 ** 8);
    const sut = new EmailCodeSecrets(configWith(8), new DrawsRandomSource([limit, range - 1, 123]));

    expect(sut.create(ROW).code).toBe('00000123');
  });

  it('should store the code as an HMAC under a key derived from the signing secret, bound to its row', () => {
    const sut = new EmailCodeSecrets(configWith(6), new DrawsRandomSource([654_321]));

    const created = sut.create(ROW);

    const key = Buffer.from(hkdfSync('sha256', SECRET, '', 'keygate-email-code-v1', 32));
    expect(created.codeHash).toBe(createHmac('sha256', key).update(`${ROW}:654321`).digest('hex'));
    expect(created.token).toMatch(/^[\w-]{43}$/);
    expect(created.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(sut.matches(ROW, created.codeHash, '654321')).toBe(true);
    expect(sut.matches(ROW, created.codeHash, '654322')).toBe(false);
    expect(sut.matches('00000000-0000-4000-8000-000000000002', created.codeHash, '654321')).toBe(
      false,
    );
    expect(sut.matches(ROW, 'not hex', '654321')).toBe(false);
  });

  it('should not open codes made under another signing secret', () => {
    const made = new EmailCodeSecrets(configWith(6), new DrawsRandomSource([1])).create(ROW);
    const other = new EmailCodeSecrets(
      { jwt: { secret: `${SECRET}-rotated` }, emailCode: { codeLength: 6 } } as AppConfig,
      new SequenceRandomSource(),
    );

    expect(other.matches(ROW, made.codeHash, made.code)).toBe(false);
  });
});
