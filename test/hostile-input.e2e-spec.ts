import fc from 'fast-check';
import { DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import { type TestResponse, useSharedTestApp } from './utils/create-test-app.js';
import { LOGIN, ME, REFRESH, REGISTER, REVOKE, REVOKE_ALL_SESSIONS } from './utils/routes.js';

const ENDPOINTS = [REGISTER, LOGIN, REFRESH, REVOKE, REVOKE_ALL_SESSIONS];

const FIELD_NAMES = [
  'username',
  'email',
  'password',
  'refreshToken',
  'reason',
  'keepCurrent',
  '__proto__',
  'constructor',
];

/** Leaks that must never reach a client: stack frames, SQL, driver names, file paths. */
const LEAKS = [
  /\n\s+at /,
  /node_modules/,
  /SQLITE/i,
  /QueryFailedError/,
  /SELECT |INSERT |UPDATE /,
  /\/(work|tmp|home|usr)\//,
  /\.ts:\d+/,
];

type Shape = 'auth' | 'user' | 'message' | 'revokedSessions' | 'error' | 'problem' | 'unauthorized';

function shapeOf(response: TestResponse): Shape | undefined {
  const body = response.json<Record<string, unknown>>();
  const keys = Object.keys(body).sort().join(',');
  switch (keys) {
    case 'accessToken,accessTokenExpiry,refreshToken,user':
      return 'auth';
    case 'createdAt,email,id,username':
      return 'user';
    case 'message':
      return 'message';
    case 'message,revokedSessions':
      return 'revokedSessions';
    case 'message,status,timestamp':
      return body.status === response.status ? 'error' : undefined;
    case 'errors,status,title,type':
      return response.status === 400 ? 'problem' : undefined;
    case 'message,status':
      return response.status === 401 && body.message === 'Unauthorized'
        ? 'unauthorized'
        : undefined;
    default:
      return undefined;
  }
}

const jsonValue = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string(), { maxKeys: 3 }),
);

const objectBody = fc.dictionary(fc.constantFrom(...FIELD_NAMES, 'extra'), jsonValue, {
  maxKeys: 6,
});

/** JSON nested deeper than the 32 levels a body may have, in objects, arrays, or at a field. */
const tooDeep = fc
  .tuple(
    fc.integer({ min: 33, max: 4000 }),
    fc.constantFrom(['[', ']'], ['{"a":', '}'], ['[{"b":', '}]']),
    fc.constantFrom(...FIELD_NAMES),
  )
  .map(([depth, [open, close], field]) => {
    const levels = open === '[{"b":' ? Math.ceil(depth / 2) : depth;
    return `{"${field}":${open.repeat(levels)}1${close.repeat(levels)}}`;
  });

/** An object naming one key twice, possibly spelled with an escape the second time. */
const repeatedKey = fc
  .tuple(fc.constantFrom(...FIELD_NAMES, 'x'), jsonValue, jsonValue, fc.boolean())
  .map(([key, first, second, escaped]) => {
    const again = escaped
      ? `\\u${key.charCodeAt(0).toString(16).padStart(4, '0')}${key.slice(1)}`
      : key;
    return `{"${key}":${JSON.stringify(first)},"${again}":${JSON.stringify(second)}}`;
  });

/** A string with a lone UTF-16 surrogate, escaped (a client cannot send it raw as UTF-8). */
const loneSurrogate = fc
  .tuple(
    fc.constantFrom(...FIELD_NAMES),
    fc.integer({ min: 0xd800, max: 0xdfff }),
    fc.string({ maxLength: 10 }),
  )
  .map(
    ([field, unit, text]) =>
      `{"${field}":${JSON.stringify(text).slice(0, -1)}\\u${unit.toString(16)}"}`,
  );

/**
 * Bodies the strict parser refuses as a whole: each answer is one of these messages on `$` (the
 * last one when a `__proto__` or `constructor` key is refused first).
 */
const REFUSED_BODY_MESSAGES = [
  'The request body must be a JSON object.',
  'The request body is nested more than 32 levels deep.',
  'The request body names the same key twice in one object.',
  'The request body has a string with a lone UTF-16 surrogate.',
];

const rawBody = fc.oneof(
  objectBody.map((body) => JSON.stringify(body)),
  tooDeep,
  repeatedKey,
  loneSurrogate,
  jsonValue.map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
  fc.constant('{"__proto__":{"isAdmin":true}}'),
  // NUL and other control characters, which PostgreSQL refuses in text columns.
  fc
    .tuple(fc.constantFrom(...FIELD_NAMES), fc.string({ unit: 'binary', maxLength: 40 }))
    .map(([field, value]) => JSON.stringify({ [field]: `a\u0000${value}@example.com` })),
  fc.constantFrom(
    JSON.stringify({ email: 'a\u0000@example.com', password: 'x' }),
    JSON.stringify({ refreshToken: 'x', reason: 'bye\u0000now' }),
    JSON.stringify({ username: 'a\u0000', email: 'a@example.com', password: 'S3cure!pass' }),
  ),
  fc.constant('{"constructor":{"prototype":{"isAdmin":true}}}'),
  fc.constant(''),
);

/** Letters of a base identity, each with the spellings a person cannot tell from it. */
const LOOK_ALIKES: Readonly<Record<string, readonly string[]>> = {
  a: ['a', 'A', '\uFF41', '\uFF21'],
  e: ['e', 'E', '\uFF45'],
  k: ['k', 'K', '\u212A', '\uFF4B'],
  s: ['s', 'S', '\uFF53'],
  ß: ['ß', 'SS', 'ss', 'Ss', '\u1E9E'],
  é: ['é', 'e\u0301', 'É', 'E\u0301'],
  σ: ['σ', 'Σ', 'ς'],
  ö: ['ö', 'o\u0308', 'Ö', 'O\u0308'],
  fi: ['fi', '\uFB01', 'FI'],
};
const DOMAINS: Readonly<Record<string, readonly string[]>> = {
  'mail.test': ['mail.test', 'MAIL.TEST', '\uFF4D\uFF41\uFF49\uFF4C\uFF0E\uFF54\uFF45\uFF53\uFF54'],
  'bücher.test': ['bücher.test', 'BÜCHER.test', 'bu\u0308cher.test', 'xn--bcher-kva.test'],
};
const INVISIBLE = ['\u200B', '\u2060', '\uFEFF', '\u00AD', '\u200E', '\u202E', '\u2066', '\u061C'];

/** A base identity: its letters and domain, from which look-alike spellings are drawn. */
const identity = fc.record({
  letters: fc.array(fc.constantFrom(...Object.keys(LOOK_ALIKES)), { minLength: 2, maxLength: 8 }),
  domain: fc.constantFrom(...Object.keys(DOMAINS)),
});
type Identity = { readonly letters: readonly string[]; readonly domain: string };

/** One spelling of `identity`, with a suffix that keeps runs apart; `pick` chooses each variant. */
function spell(base: Identity, suffix: string, pick: (count: number) => number): string {
  const local = base.letters.map((letter) => {
    const variants = LOOK_ALIKES[letter];
    return variants[pick(variants.length)];
  });
  const domains = DOMAINS[base.domain];
  return `${local.join('')}${suffix}@${domains[pick(domains.length)]}`;
}

describe('hostile input', () => {
  const t = useSharedTestApp();
  let accessToken: string;

  beforeAll(async () => {
    ({ accessToken } = await registerUser(t));
  });

  it('should answer generated bodies on every endpoint with a documented shape, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        rawBody,
        fc.boolean(),
        async (path, body, withToken) => {
          const response = await t.request(path, {
            method: 'POST',
            body,
            headers: {
              'content-type': 'application/json',
              ...(withToken ? { authorization: `Bearer ${accessToken}` } : {}),
            },
          });
          expect(response.status).not.toBe(500);
          expect(response.status).toBeLessThan(500);
          expect(shapeOf(response)).toBeDefined();
          for (const leak of LEAKS) {
            expect(response.text).not.toMatch(leak);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('should refuse generated deep, repeated-key and lone-surrogate bodies as a whole, on every endpoint', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        fc.oneof(tooDeep, repeatedKey, loneSurrogate),
        async (path, body) => {
          const response = await t.request(path, {
            method: 'POST',
            body,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
          });
          expect(response.status).toBe(400);
          const { errors } = response.json<{ errors: Record<string, string[]> }>();
          expect(Object.keys(errors)).toEqual(['$']);
          expect(REFUSED_BODY_MESSAGES).toContain(errors.$[0]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('should make look-alike e-mails one account that logs in as the API echoes it', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        identity,
        fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
        fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
        async (base, firstPicks, secondPicks) => {
          run += 1;
          const picker = (picks: number[]) => {
            let next = 0;
            return (count: number) => picks[next++ % picks.length] % count;
          };
          const first = spell(base, `x${run}`, picker(firstPicks));
          const second = spell(base, `x${run}`, picker(secondPicks));
          const registered = await t.post('/api/auth/register', {
            username: `look-alike ${run}`,
            email: first,
            password: DEFAULT_PASSWORD,
          });
          expect(registered.status).toBe(201);
          const echoed = registered.json<{ user: { id: string; email: string } }>().user;

          for (const email of [echoed.email, first, second]) {
            const login = await t.post('/api/auth/login', { email, password: DEFAULT_PASSWORD });
            expect(login.status).toBe(200);
            expect(login.json<{ user: { id: string; email: string } }>().user).toEqual(
              expect.objectContaining({ id: echoed.id, email: echoed.email }),
            );
          }
          const again = await t.post('/api/auth/register', {
            username: 'twin',
            email: second,
            password: DEFAULT_PASSWORD,
          });
          expect(again.status).toBe(409);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('should refuse generated identities that carry an invisible or direction-changing character', async () => {
    await fc.assert(
      fc.asyncProperty(
        identity,
        fc.constantFrom(...INVISIBLE),
        fc.nat(),
        fc.boolean(),
        async (base, invisible, position, inUsername) => {
          const email = spell(base, 'inv', () => 0);
          const at = position % email.length;
          const spoiled = `${email.slice(0, at)}${invisible}${email.slice(at)}`;
          const body = inUsername
            ? { username: `na${invisible}me`, email, password: DEFAULT_PASSWORD }
            : { username: 'name', email: spoiled, password: DEFAULT_PASSWORD };
          const response = await t.post('/api/auth/register', body);
          expect(response.status).toBe(400);
          const field = inUsername ? 'username' : 'email';
          expect(response.json<{ errors: Record<string, string[]> }>().errors[field]).toContain(
            `${field} must not contain invisible or direction-changing characters`,
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('should answer generated Authorization headers on /me with the bare 401 or the profile', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 200 }).filter((value) => /^[\x20-\x7e]*$/.test(value)),
          fc.string({ maxLength: 100 }).map((value) => `Bearer ${value}`),
          fc.constant(`Bearer ${'a'.repeat(20)}.${'b'.repeat(20)}.${'c'.repeat(20)}`),
        ),
        async (header) => {
          const response = await t.request(ME, { headers: { authorization: header } });
          expect([200, 401]).toContain(response.status);
          expect(shapeOf(response)).toBeDefined();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('should not touch Object.prototype when a body carries __proto__ or constructor keys', async () => {
    for (const body of [
      '{"__proto__":{"polluted":1}}',
      '{"constructor":{"prototype":{"polluted":1}}}',
    ]) {
      const response = await t.request(LOGIN, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});
