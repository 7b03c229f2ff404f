import { DEFAULT_PASSWORD } from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';

const REGISTER = '/api/auth/register';
const LOGIN = '/api/auth/login';
const INVISIBLE = 'must not contain invisible or direction-changing characters';

interface AuthBody {
  readonly accessToken: string;
  readonly user: { readonly email: string; readonly username: string };
}

/**
 * Addresses a person cannot tell apart, each with the canonical form the API answers with. The
 * first registers; every other is the same account.
 */
const SAME_PERSON: ReadonlyArray<readonly [string, readonly string[], string]> = [
  ['ASCII case', ['Alice@Example.test', 'ALICE@EXAMPLE.TEST'], 'alice@example.test'],
  ['full Unicode case: ß and SS', ['straße@mail.test', 'STRASSE@mail.test'], 'strasse@mail.test'],
  [
    'final and medial sigma',
    ['οδος@mail.test', 'ΟΔΟΣ@mail.test', 'οδοσ@mail.test'],
    'οδοσ@mail.test',
  ],
  ['dotted capital I', ['İpek@mail.test', 'i̇pek@mail.test'], 'i̇pek@mail.test'],
  [
    'NFD and NFC',
    ['jose\u0301@mail.test', 'jos\u00e9@mail.test', 'JOSE\u0301@mail.test'],
    'josé@mail.test',
  ],
  ['fullwidth forms', ['ｆｕｌｌ＠ｗｉｄｔｈ．ｔｅｓｔ', 'full@width.test'], 'full@width.test'],
  ['the Kelvin sign', ['\u212Aate@mail.test', 'kate@mail.test'], 'kate@mail.test'],
  ['a ligature', ['\uFB01ona@mail.test', 'fiona@mail.test'], 'fiona@mail.test'],
  [
    'a Unicode domain and its xn-- form',
    ['jo@bücher.test', 'jo@xn--bcher-kva.test', 'jo@BÜCHER.TEST', 'jo@bu\u0308cher.test'],
    'jo@xn--bcher-kva.test',
  ],
  ['a fullwidth dot in the domain', ['dot@mail\uFF0Etest', 'dot@mail.test'], 'dot@mail.test'],
];

/** Addresses that look different, and are different accounts. */
const DIFFERENT_PEOPLE: ReadonlyArray<readonly [string, string, string]> = [
  ['ß and ss in a domain (two IDNA2008 domains)', 'x@straße.test', 'x@strasse.test'],
  ['dotless ı and i', 'yıldız@mail.test', 'yildiz@mail.test'],
  ['é and e', 'rene@mail.test', 'rené@mail.test'],
];

const INVISIBLES: ReadonlyArray<readonly [string, string]> = [
  ['U+200B zero width space', '\u200B'],
  ['U+2060 word joiner', '\u2060'],
  ['U+FEFF zero width no-break space', '\uFEFF'],
  ['U+00AD soft hyphen', '\u00AD'],
  ['U+200D zero width joiner', '\u200D'],
  ['U+180E Mongolian vowel separator', '\u180E'],
  ['U+FE0F variation selector', '\uFE0F'],
  ['U+200E left-to-right mark', '\u200E'],
  ['U+200F right-to-left mark', '\u200F'],
  ['U+061C Arabic letter mark', '\u061C'],
  ['U+202E right-to-left override', '\u202E'],
  ['U+2067 right-to-left isolate', '\u2067'],
];

describe('identity strings', () => {
  let t: TestApp;
  let sequence = 0;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  const register = (email: string, username = `person${(sequence += 1)}`) =>
    t.post(REGISTER, { username, email, password: DEFAULT_PASSWORD });
  const login = (email: string) => t.post(LOGIN, { email, password: DEFAULT_PASSWORD });

  describe.each(SAME_PERSON)('%s', (_case, [first, ...others], canonical) => {
    let echoed: string;

    it(`should register ${first} and answer with its canonical form`, async () => {
      const response = await register(first);

      expect(response.status).toBe(201);
      echoed = response.json<AuthBody>().user.email;
      expect(echoed).toBe(canonical);
    });

    it('should log in with the address exactly as the API returned it, and show it at /me', async () => {
      const response = await login(echoed);

      expect(response.status).toBe(200);
      const me = await t.get('/api/auth/me', response.json<AuthBody>().accessToken);
      expect(me.json<{ email: string }>().email).toBe(echoed);
    });

    it.each(others)('should refuse to register %s again (409)', async (other) => {
      const response = await register(other);

      expect(response.status).toBe(409);
      expect(response.json()).toEqual(errorBody(409, 'Ya existe una cuenta con ese email.'));
    });

    it.each(others)('should log %s in as the same account', async (other) => {
      const response = await login(other);

      expect(response.status).toBe(200);
      expect(response.json<AuthBody>().user.email).toBe(canonical);
    });
  });

  it.each(DIFFERENT_PEOPLE)('should keep %s as two accounts', async (_case, one, other) => {
    const first = await register(one);
    const second = await register(other);

    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(first.json<AuthBody>().user.email).not.toBe(second.json<AuthBody>().user.email);
  });

  describe.each(INVISIBLES)('%s', (_case, char) => {
    it.each([
      ['inside the local part', `ali${char}ce@mail.test`],
      ['at the end', `alice@mail.test${char}`],
      ['at the start', `${char}alice@mail.test`],
      ['inside the domain', `alice@ma${char}il.test`],
    ])('should refuse it in an e-mail %s, at registration and at login', async (_where, email) => {
      const registration = await register(email);
      expect(registration.status).toBe(400);
      expect(registration.json()).toMatchObject({
        status: 400,
        errors: { email: expect.arrayContaining([`email ${INVISIBLE}`]) },
      });

      const attempt = await login(email);
      expect(attempt.status).toBe(400);
      expect(attempt.json()).toMatchObject({
        errors: { email: expect.arrayContaining([`email ${INVISIBLE}`]) },
      });
    });

    it('should refuse it in a username', async () => {
      for (const username of [`ali${char}ce`, `alice${char}`, `${char}alice`]) {
        const response = await register(`u${(sequence += 1)}@mail.test`, username);

        expect(response.status).toBe(400);
        expect(response.json()).toMatchObject({
          errors: { username: expect.arrayContaining([`username ${INVISIBLE}`]) },
        });
      }
    });
  });

  it.each([
    ['a domain UTS #46 refuses', 'someone@xn--zz.test'],
    ['a percent-encoded domain', 'someone@ex%41mple.test'],
    ['an unassigned code point', 'some\u0378one@mail.test'],
  ])('should refuse %s at registration', async (_case, email) => {
    const response = await register(email);

    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({ errors: { email: ['email must be an email'] } });
  });

  it('should keep a username exactly as registered, with its letters and emoji', async () => {
    const username = 'Zoë 😀 李';

    const response = await register(`zoe${(sequence += 1)}@mail.test`, username);

    expect(response.status).toBe(201);
    const me = await t.get('/api/auth/me', response.json<AuthBody>().accessToken);
    expect(me.json<{ username: string }>().username).toBe(username);
  });
});
