// The baseline for `npm run bench -- --pg`: the same four endpoints as the service with the same
// response shapes, on PostgreSQL, with as little machinery as possible (plain Fastify, `pg` with
// named statements, node:crypto), and with the same atomic guarantees: a refresh revokes the
// presented token only if it is still active and inserts its successor in the same statement, so
// of two instances presenting one token only one wins; registration inserts the account and its
// first token together; login records the success and issues the token together. It keeps the
// real costs (PBKDF2 at 600,000 iterations, HS256) and drops what is not measured (lockout
// counting, the audit trail, validation beyond presence). Run as two instances, like the service.
//
// node bench/baseline-pg.mjs --port 4000 --db postgres://... --secret <at least 32 characters>
import Fastify from 'fastify';
import { Buffer } from 'node:buffer';
import {
  createHash,
  createHmac,
  createSecretKey,
  pbkdf2,
  randomBytes,
  randomUUID,
  timingSafeEqual,
} from 'node:crypto';
import process from 'node:process';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    db: { type: 'string' },
    secret: { type: 'string' },
    'pool-size': { type: 'string', default: '10' },
  },
});
const ITERATIONS = 600_000;
const ISSUER = 'keygate';
const AUDIENCE = 'keygate-clients';
const ACCESS_TTL_S = 15 * 60;
const REFRESH_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const pbkdf2Async = promisify(pbkdf2);
const key = createSecretKey(Buffer.from(args.secret, 'utf8'));
const pool = new pg.Pool({ connectionString: args.db, max: Number(args['pool-size']) });

// The service's schema (src/database/migrations) as PostgreSQL DDL; instances take turns.
const ddl = await pool.connect();
try {
  await ddl.query('SELECT pg_advisory_lock(4242)');
  await ddl.query(`
    CREATE TABLE IF NOT EXISTS users (
      id varchar(36) PRIMARY KEY, username varchar(100) NOT NULL,
      email varchar(254) NOT NULL UNIQUE, "passwordHash" varchar(255) NOT NULL,
      "failedLoginAttempts" integer NOT NULL DEFAULT 0, "lockoutEnd" timestamptz,
      "isActive" boolean NOT NULL DEFAULT true, "createdAt" timestamptz NOT NULL,
      "lastLoginAt" timestamptz);
    CREATE TABLE IF NOT EXISTS refresh_tokens (
      id varchar(36) PRIMARY KEY, "tokenHash" varchar(64) NOT NULL UNIQUE,
      "userId" varchar(36) NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      "familyId" varchar(36) NOT NULL, generation integer NOT NULL,
      "expiresAt" timestamptz NOT NULL, "createdAt" timestamptz NOT NULL,
      "createdByIp" varchar(64) NOT NULL, "isRevoked" boolean NOT NULL DEFAULT false,
      "revokedAt" timestamptz, "revokedByIp" varchar(64), "reasonRevoked" varchar(500),
      "replacedByTokenId" varchar(36));
    CREATE INDEX IF NOT EXISTS "IDX_refresh_tokens_userId" ON refresh_tokens ("userId");
    CREATE INDEX IF NOT EXISTS "IDX_refresh_tokens_family" ON refresh_tokens ("familyId", generation);
    CREATE INDEX IF NOT EXISTS "IDX_refresh_tokens_expiresAt" ON refresh_tokens ("expiresAt");
  `);
} finally {
  await ddl.query('SELECT pg_advisory_unlock(4242)');
  ddl.release();
}

const USER_COLUMNS = 'id, username, email, "createdAt", "isActive"';
const INSERT_TOKEN = `INSERT INTO refresh_tokens
  (id, "tokenHash", "userId", "familyId", generation, "expiresAt", "createdAt", "createdByIp")`;

/** Named statements: parsed once per connection, one round trip per run. */
const sql = {
  userById: { name: 'user_by_id', text: `SELECT ${USER_COLUMNS} FROM users WHERE id = $1` },
  userByEmail: {
    name: 'user_by_email',
    text: `SELECT ${USER_COLUMNS}, "passwordHash" FROM users WHERE email = $1`,
  },
  register: {
    name: 'register',
    text: `WITH u AS (INSERT INTO users (id, username, email, "passwordHash", "createdAt")
        VALUES ($1, $2, $3, $4, $5) RETURNING id)
      ${INSERT_TOKEN} SELECT $1, $6, u.id, $1, 0, $7, $5, $8 FROM u`,
  },
  login: {
    name: 'login',
    text: `WITH u AS (UPDATE users SET "failedLoginAttempts" = 0, "lockoutEnd" = NULL,
        "lastLoginAt" = $2 WHERE id = $1 RETURNING id)
      ${INSERT_TOKEN} SELECT $3, $4, u.id, $3, 0, $5, $2, $6 FROM u`,
  },
  loginFailed: {
    name: 'login_failed',
    text: 'UPDATE users SET "failedLoginAttempts" = "failedLoginAttempts" + 1 WHERE id = $1',
  },
  // Revokes the presented token only if still active and inserts its successor, atomically: of
  // concurrent presentations only one update matches (the others re-check the committed row).
  rotate: {
    name: 'rotate',
    text: `WITH r AS (UPDATE refresh_tokens t SET "isRevoked" = true, "revokedAt" = $2,
        "revokedByIp" = $3, "reasonRevoked" = 'Replaced by new token', "replacedByTokenId" = $4
        FROM users u WHERE t."tokenHash" = $1 AND t."isRevoked" = false AND t."expiresAt" > $2
        AND u.id = t."userId" AND u."isActive"
        RETURNING t."userId", t."familyId", t.generation, u.username, u.email, u."createdAt"),
      i AS (${INSERT_TOKEN} SELECT $4, $5, r."userId", r."familyId", r.generation + 1, $6, $2, $3
        FROM r RETURNING 1)
      SELECT r."userId" AS id, r.username, r.email, r."createdAt" FROM r, i`,
  },
};

const JWT_HEADER = base64url({ alg: 'HS256', typ: 'JWT' });

function base64url(value) {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function hmac(input) {
  return createHmac('sha256', key).update(input).digest();
}

function signAccessToken(user, nowMs) {
  const iat = Math.floor(nowMs / 1000);
  const exp = iat + ACCESS_TTL_S;
  const claims = { sub: user.id, email: user.email, jti: randomUUID(), iat, exp, iss: ISSUER };
  const body = `${JWT_HEADER}.${base64url({ ...claims, aud: AUDIENCE })}`;
  return { token: `${body}.${hmac(body).toString('base64url')}`, exp };
}

/** The claims of a valid HS256 access token, or null. The header must be exactly ours. */
function verifyAccessToken(token) {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== JWT_HEADER) {
    return null;
  }
  const expected = hmac(`${parts[0]}.${parts[1]}`);
  const given = Buffer.from(parts[2], 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return null;
  }
  const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  const fresh = typeof claims.exp === 'number' && claims.exp * 1000 > Date.now();
  return fresh && claims.iss === ISSUER && claims.aud === AUDIENCE ? claims : null;
}

async function hashPassword(password) {
  const salt = randomBytes(16);
  const derived = await pbkdf2Async(password, salt, ITERATIONS, 32, 'sha256');
  return `pbkdf2-sha256$${ITERATIONS}$${salt.toString('base64')}$${derived.toString('base64')}`;
}

async function verifyPassword(password, stored) {
  const [, iterations, salt, expected] = stored.split('$');
  const derived = await pbkdf2Async(
    password,
    Buffer.from(salt, 'base64'),
    Number(iterations),
    32,
    'sha256',
  );
  return timingSafeEqual(derived, Buffer.from(expected, 'base64'));
}

const sha256 = (value) => createHash('sha256').update(value).digest('hex');
const publicUser = (u) => ({
  id: u.id,
  username: u.username,
  email: u.email,
  createdAt: u.createdAt instanceof Date ? u.createdAt.toISOString() : u.createdAt,
});

/** The auth response of SPEC 2.3 for a refresh token already stored. */
function authResponse(user, raw, nowMs) {
  const access = signAccessToken(user, nowMs);
  return {
    accessToken: access.token,
    refreshToken: raw,
    accessTokenExpiry: new Date(access.exp * 1000).toISOString(),
    user: publicUser(user),
  };
}

function newRefreshToken() {
  const raw = randomBytes(32).toString('base64url');
  return { raw, hash: sha256(raw) };
}

const run = async (statement, values) => (await pool.query({ ...statement, values })).rows;
const dummyHash = hashPassword('dummy-password');

/** Sets the status and returns the error body of SPEC 2.4; handlers return it as their value. */
function fail(reply, status, message) {
  reply.code(status);
  return { status, message, timestamp: new Date().toISOString() };
}

const app = Fastify({ logger: false });

app.post('/api/auth/register', async (request, reply) => {
  const { username, email, password } = request.body ?? {};
  if (typeof username !== 'string' || typeof email !== 'string' || typeof password !== 'string') {
    return fail(reply, 400, 'Invalid request');
  }
  const normalized = email.trim().toLowerCase();
  if ((await run(sql.userByEmail, [normalized])).length > 0) {
    return fail(reply, 409, 'Ya existe una cuenta con ese email.');
  }
  const now = Date.now();
  const user = { id: randomUUID(), username, email: normalized, createdAt: new Date(now) };
  const passwordHash = await hashPassword(password);
  const token = newRefreshToken();
  try {
    await run(sql.register, [
      user.id,
      username,
      normalized,
      passwordHash,
      user.createdAt,
      token.hash,
      new Date(now + REFRESH_TTL_MS),
      request.ip,
    ]);
  } catch (error) {
    if (error.code === '23505') {
      return fail(reply, 409, 'Ya existe una cuenta con ese email.');
    }
    throw error;
  }
  reply.code(201);
  return authResponse(user, token.raw, now);
});

app.post('/api/auth/login', async (request, reply) => {
  const { email, password } = request.body ?? {};
  if (typeof email !== 'string' || typeof password !== 'string') {
    return fail(reply, 400, 'Invalid request');
  }
  const [user] = await run(sql.userByEmail, [email.trim().toLowerCase()]);
  const isCorrect = await verifyPassword(password, user?.passwordHash ?? (await dummyHash));
  if (!user || !isCorrect) {
    if (user) {
      await run(sql.loginFailed, [user.id]);
    }
    return fail(reply, 401, 'Credenciales inválidas.');
  }
  const now = Date.now();
  const token = newRefreshToken();
  await run(sql.login, [
    user.id,
    new Date(now),
    randomUUID(),
    token.hash,
    new Date(now + REFRESH_TTL_MS),
    request.ip,
  ]);
  return authResponse(user, token.raw, now);
});

app.post('/api/auth/refresh', async (request, reply) => {
  const raw = request.body?.refreshToken;
  if (typeof raw !== 'string') {
    return fail(reply, 401, 'Refresh token inválido.');
  }
  const now = Date.now();
  const next = newRefreshToken();
  const [user] = await run(sql.rotate, [
    sha256(raw),
    new Date(now),
    request.ip,
    randomUUID(),
    next.hash,
    new Date(now + REFRESH_TTL_MS),
  ]);
  return user ? authResponse(user, next.raw, now) : fail(reply, 401, 'Refresh token inválido.');
});

app.get('/api/auth/me', async (request, reply) => {
  const header = request.headers.authorization;
  const claims = header?.startsWith('Bearer ') ? verifyAccessToken(header.slice(7)) : null;
  if (!claims) {
    reply.code(401);
    return { status: 401, message: 'Unauthorized' };
  }
  const [user] = await run(sql.userById, [claims.sub]);
  if (!user) {
    return fail(reply, 404, 'Usuario no encontrado.');
  }
  return user.isActive ? publicUser(user) : fail(reply, 401, 'Cuenta desactivada.');
});

await app.listen({ port: Number(args.port), host: '127.0.0.1' });

process.once('SIGTERM', () => {
  void app.close().then(async () => {
    await pool.end();
    process.exit(0);
  });
});
