import { User } from '../src/users/entities/user.entity.js';
import { findRefreshToken } from './factories/refresh-token.factory.js';
import { reloadUser } from './factories/user.factory.js';
import { useSharedTestApp } from './utils/create-test-app.js';
import { authResponse, errorBody, problemDetails } from './utils/expected-bodies.js';
import { LOGIN, ME, REGISTER } from './utils/routes.js';

const START = new Date('2026-02-03T10:00:00.000Z');
const FIFTEEN_MINUTES_MS = 15 * 60 * 1000;
const STRONG_PASSWORD = 'Str0ng!Passw0rd';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Field = 'username' | 'email' | 'password';

interface RegisterBody {
  username: string;
  email: string;
  password: string;
}

interface AuthBody {
  accessToken: string;
  refreshToken: string;
  accessTokenExpiry: string;
  user: { id: string; username: string; email: string; createdAt: string };
}

let sequence = 0;

/** A valid registration with a unique username and e-mail. */
function validBody(overrides: Partial<RegisterBody> = {}): RegisterBody {
  sequence += 1;
  return {
    username: `reg${sequence}`,
    email: `reg${sequence}@example.com`,
    password: STRONG_PASSWORD,
    ...overrides,
  };
}

/** Marks a field that the request body leaves out. */
const MISSING = Symbol('missing');

function bodyWith(field: Field, value: unknown): Record<string, unknown> {
  const body: Record<string, unknown> = { ...validBody() };
  if (value === MISSING) {
    delete body[field];
  } else {
    body[field] = value;
  }
  return body;
}

/** A syntactically valid address of exactly `length` characters (64-character local part). */
function emailOfLength(length: number): string {
  const local = 'a'.repeat(64);
  const labels: string[] = [];
  let rest = length - local.length - 1 - '.com'.length;
  while (rest > 0) {
    const label = Math.min(63, rest);
    labels.push('b'.repeat(label));
    rest -= label + 1;
  }
  const email = `${local}@${labels.join('.')}.com`;
  if (email.length !== length) {
    throw new Error(`emailOfLength(${length}) built ${email.length} characters`);
  }
  return email;
}

/** 'Aa1!' plus astral emoji: each emoji is one code point but two UTF-16 units. */
function passwordOfCodePoints(codePoints: number): string {
  return 'Aa1!' + '😀'.repeat(codePoints - 4);
}

interface InvalidCase {
  readonly name: string;
  readonly field: Field;
  readonly value: unknown;
}

const WRONG_TYPES: ReadonlyArray<readonly [string, (valid: string) => unknown]> = [
  ['a number', () => 12345],
  ['null', () => null],
  ['an array', (valid) => [valid]],
  ['an object', (valid) => ({ value: valid })],
];

const VALID_VALUES: Readonly<Record<Field, string>> = {
  username: 'typed',
  email: 'typed@example.com',
  password: STRONG_PASSWORD,
};

const INVALID_CASES: readonly InvalidCase[] = [
  { name: 'a missing username', field: 'username', value: MISSING },
  { name: 'a missing email', field: 'email', value: MISSING },
  { name: 'a missing password', field: 'password', value: MISSING },
  { name: 'an empty username', field: 'username', value: '' },
  { name: 'a whitespace-only username', field: 'username', value: '   \t ' },
  { name: 'a username of 101 characters', field: 'username', value: 'u'.repeat(101) },
  { name: 'a username with a BEL control character', field: 'username', value: 'ali\u0007ce' },
  { name: 'a username with a line feed', field: 'username', value: 'ali\nce' },
  { name: 'an e-mail without @', field: 'email', value: 'alice.example.com' },
  { name: 'an e-mail without domain', field: 'email', value: 'alice@' },
  { name: 'an e-mail with a space inside', field: 'email', value: 'ali ce@example.com' },
  { name: 'an empty e-mail', field: 'email', value: '' },
  { name: 'an e-mail of 255 characters', field: 'email', value: emailOfLength(255) },
  { name: 'a password of 7 characters', field: 'password', value: 'Aa1!bcd' },
  { name: 'a password of 129 code points', field: 'password', value: passwordOfCodePoints(129) },
  { name: 'a password without uppercase', field: 'password', value: 'str0ng!passw0rd' },
  { name: 'a password without lowercase', field: 'password', value: 'STR0NG!PASSW0RD' },
  { name: 'a password without digit', field: 'password', value: 'Strong!Password' },
  { name: 'a password without special character', field: 'password', value: 'Str0ngPassw0rd' },
  { name: 'an empty password', field: 'password', value: '' },
  ...(['username', 'email', 'password'] as const).flatMap((field) =>
    WRONG_TYPES.map(([kind, make]) => ({
      name: `${field} as ${kind}`,
      field,
      value: make(VALID_VALUES[field]),
    })),
  ),
];

describe('POST /api/auth/register', () => {
  const t = useSharedTestApp();

  beforeEach(() => {
    t.clock.set(START);
  });

  const countUsers = (): Promise<number> => t.dataSource.getRepository(User).count();

  describe('success', () => {
    it('should answer 201 with the auth response and exactly the public user fields', async () => {
      const body = validBody();

      const res = await t.post(REGISTER, body);

      expect(res.status).toBe(201);
      const json = res.json<AuthBody>();
      expect(json).toEqual({
        ...authResponse({ username: body.username, email: body.email }),
        accessTokenExpiry: new Date(START.getTime() + FIFTEEN_MINUTES_MS).toISOString(),
        user: {
          id: expect.stringMatching(UUID),
          username: body.username,
          email: body.email,
          createdAt: START.toISOString(),
        },
      });
      expect(Object.keys(json.user).sort()).toEqual(['createdAt', 'email', 'id', 'username']);
    });

    it('should persist an active user with a hashed password and default login state', async () => {
      const body = validBody();

      const res = await t.post(REGISTER, body);

      expect(res.status).toBe(201);
      const { user } = res.json<AuthBody>();
      const stored = await reloadUser(t, user.id);
      expect(stored).toEqual({
        id: user.id,
        username: body.username,
        email: body.email,
        passwordHash: expect.any(String),
        failedLoginAttempts: 0,
        lockoutEnd: null,
        isActive: true,
        createdAt: START,
        lastLoginAt: null,
        emailVerifiedAt: null,
      });
      expect(stored.passwordHash).not.toContain(body.password);
    });

    it('should issue a usable token pair', async () => {
      const body = validBody();

      const res = await t.post(REGISTER, body);

      expect(res.status).toBe(201);
      const json = res.json<AuthBody>();
      const me = await t.get(ME, json.accessToken);
      expect(me.status).toBe(200);
      expect(me.json()).toEqual(json.user);
      const token = await findRefreshToken(t, json.refreshToken);
      expect(token).toEqual(
        expect.objectContaining({ userId: json.user.id, isRevoked: false, createdAt: START }),
      );
    });

    it('should trim the e-mail and store it in lower case', async () => {
      const res = await t.post(REGISTER, validBody({ email: '  Alice@Example.COM ' }));

      expect(res.status).toBe(201);
      const { user } = res.json<AuthBody>();
      expect(user.email).toBe('alice@example.com');
      expect((await reloadUser(t, user.id)).email).toBe('alice@example.com');
      const login = await t.post(LOGIN, { email: 'alice@example.com', password: STRONG_PASSWORD });
      expect(login.status).toBe(200);
    });

    it('should trim the username', async () => {
      const res = await t.post(REGISTER, validBody({ username: '  bob the builder \t' }));

      expect(res.status).toBe(201);
      const { user } = res.json<AuthBody>();
      expect(user.username).toBe('bob the builder');
      expect((await reloadUser(t, user.id)).username).toBe('bob the builder');
    });

    it('should accept a username of 100 characters', async () => {
      const username = 'u'.repeat(100);

      const res = await t.post(REGISTER, validBody({ username }));

      expect(res.status).toBe(201);
      expect(res.json<AuthBody>().user.username).toBe(username);
    });

    it('should accept an e-mail of 254 characters', async () => {
      const email = emailOfLength(254);

      const res = await t.post(REGISTER, validBody({ email }));

      expect(res.status).toBe(201);
      expect(res.json<AuthBody>().user.email).toBe(email);
    });

    it('should accept a password of 8 characters', async () => {
      const res = await t.post(REGISTER, validBody({ password: 'Aa1!bcde' }));

      expect(res.status).toBe(201);
    });

    it('should count password length in code points and accept 128 of them', async () => {
      const password = passwordOfCodePoints(128);
      expect(password.length).toBe(252);
      const body = validBody({ password });

      const res = await t.post(REGISTER, body);

      expect(res.status).toBe(201);
      const login = await t.post(LOGIN, { email: body.email, password });
      expect(login.status).toBe(200);
    });

    it('should not trim the password', async () => {
      const body = validBody({ password: `  ${STRONG_PASSWORD}  ` });
      expect((await t.post(REGISTER, body)).status).toBe(201);

      const trimmed = await t.post(LOGIN, { email: body.email, password: STRONG_PASSWORD });
      const exact = await t.post(LOGIN, { email: body.email, password: body.password });

      expect(trimmed.status).toBe(401);
      expect(trimmed.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
      expect(exact.status).toBe(200);
    });
  });

  describe('duplicate e-mail', () => {
    it('should answer 409 for an e-mail that is already registered', async () => {
      const first = validBody();
      expect((await t.post(REGISTER, first)).status).toBe(201);
      const users = await countUsers();

      const res = await t.post(REGISTER, validBody({ email: first.email }));

      expect(res.status).toBe(409);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.json()).toEqual(errorBody(409, 'Ya existe una cuenta con ese email.'));
      expect(await countUsers()).toBe(users);
    });

    it.each([
      ['upper-case', (email: string) => email.toUpperCase()],
      [
        'mixed-case, space-padded',
        (email: string) => `  ${email[0].toUpperCase()}${email.slice(1)} `,
      ],
    ])('should answer 409 for the %s variant of a registered e-mail', async (_name, variant) => {
      const first = validBody();
      const registered = await t.post(REGISTER, first);
      expect(registered.status).toBe(201);
      const users = await countUsers();

      const res = await t.post(REGISTER, validBody({ email: variant(first.email) }));

      expect(res.status).toBe(409);
      expect(res.json()).toEqual(errorBody(409, 'Ya existe una cuenta con ese email.'));
      expect(await countUsers()).toBe(users);
      const original = await reloadUser(t, registered.json<AuthBody>().user.id);
      expect(original.username).toBe(first.username);
    });
  });

  describe('validation', () => {
    it.each(INVALID_CASES)(
      'should answer 400 problem details naming $field for $name',
      async ({ field, value }) => {
        const users = await countUsers();

        const res = await t.post(REGISTER, bodyWith(field, value));

        expect(res.status).toBe(400);
        expect(res.json()).toEqual(problemDetails([field]));
        expect(await countUsers()).toBe(users);
      },
    );

    it('should name every failing field at once', async () => {
      const res = await t.post(REGISTER, {});

      expect(res.status).toBe(400);
      expect(res.json()).toEqual(problemDetails(['username', 'email', 'password']));
    });
  });

  describe('logging', () => {
    it('should log the registration at information level without any secret', async () => {
      const mark = t.logger.entries.length;
      const body = validBody({ password: 'Reg1ster!L0gSecret' });

      const res = await t.post(REGISTER, body);

      expect(res.status).toBe(201);
      const json = res.json<AuthBody>();
      const entries = t.logger.entries.slice(mark);
      expect(entries).toContainEqual(
        expect.objectContaining({ level: 'log', text: expect.stringContaining(json.user.id) }),
      );
      expect(entries.filter((entry) => entry.level !== 'log')).toEqual([]);
      const stored = await reloadUser(t, json.user.id);
      const allText = t.logger.allText();
      expect(allText).not.toContain(body.password);
      expect(allText).not.toContain(stored.passwordHash);
      expect(allText).not.toContain(json.accessToken);
      expect(allText).not.toContain(json.refreshToken);
    });
  });
});
