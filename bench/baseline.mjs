// The baseline for `npm run bench`: the same four endpoints with the same response shapes, done
// with as little machinery as possible (plain Fastify, better-sqlite3 prepared statements,
// node:crypto), so that the service's figures can be read against what the work itself costs.
// It keeps the real costs (PBKDF2 at 600,000 iterations, HS256, SQLite in WAL with
// synchronous=NORMAL as the service uses) and drops what is not measured (lockout, reuse
// detection, validation beyond presence).
//
// node bench/baseline.mjs --port 4000 --db /tmp/baseline.db --secret <at least 32 characters>
import Database from 'better-sqlite3';
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

const { values: args } = parseArgs({
  options: { port: { type: 'string' }, db: { type: 'string' }, secret: { type: 'string' } },
});
const ITERATIONS = 600_000;
const ISSUER = 'keygate';
const AUDIENCE = 'keygate-clients';
const ACCESS_TTL_S = 15 * 60;
const REFRESH_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const pbkdf2Async = promisify(pbkdf2);
const key = createSecretKey(Buffer.from(args.secret, 'utf8'));

// The service's migrations (src/database/migrations), written as SQLite DDL.
const db = new Database(args.db);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.exec(`
  CREATE TABLE IF NOT EXISTS users (
    id varchar(36) PRIMARY KEY, username varchar(100) NOT NULL, email varchar(254) NOT NULL UNIQUE,
    passwordHash varchar(255) NOT NULL, failedLoginAttempts integer NOT NULL DEFAULT 0,
    lockoutEnd datetime, isActive boolean NOT NULL DEFAULT 1, createdAt datetime NOT NULL,
    lastLoginAt datetime);
  CREATE TABLE IF NOT EXISTS refresh_tokens (
    id varchar(36) PRIMARY KEY, tokenHash varchar(64) NOT NULL UNIQUE,
    userId varchar(36) NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    familyId varchar(36) NOT NULL, generation integer NOT NULL, expiresAt datetime NOT NULL,
    createdAt datetime NOT NULL, createdByIp varchar(64) NOT NULL,
    isRevoked boolean NOT NULL DEFAULT 0, revokedAt datetime, revokedByIp varchar(64),
    reasonRevoked varchar(500), replacedByTokenId varchar(36));
  CREATE INDEX IF NOT EXISTS IDX_refresh_tokens_userId ON refresh_tokens (userId);
  CREATE INDEX IF NOT EXISTS IDX_refresh_tokens_family ON refresh_tokens (familyId, generation);
  CREATE INDEX IF NOT EXISTS IDX_refresh_tokens_expiresAt ON refresh_tokens (expiresAt);
`);
const sql = {
  userById: db.prepare('SELECT * FROM users WHERE id = ?'),
  userByEmail: db.prepare('SELECT * FROM users WHERE email = ?'),
  insertUser: db.prepare(
    'INSERT INTO users (id, username, email, passwordHash, createdAt) VALUES (?, ?, ?, ?, ?)',
  ),
  loginSucceeded: db.prepare(
    'UPDATE users SET failedLoginAttempts = 0, lockoutEnd = NULL, lastLoginAt = ? WHERE id = ?',
  ),
  loginFailed: db.prepare(
    'UPDATE users SET failedLoginAttempts = failedLoginAttempts + 1 WHERE id = ?',
  ),
  tokenByHash: db.prepare('SELECT * FROM refresh_tokens WHERE tokenHash = ?'),
  insertToken: db.prepare(`INSERT INTO refresh_tokens
    (id, tokenHash, userId, familyId, generation, expiresAt, createdAt, createdByIp)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
  rotateOut: db.prepare(`UPDATE refresh_tokens SET isRevoked = 1, revokedAt = ?, revokedByIp = ?,
    reasonRevoked = 'Replaced by new token', replacedByTokenId = ? WHERE id = ? AND isRevoked = 0`),
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
  createdAt: u.createdAt,
});

/** Inserts a refresh token and signs an access token: the auth response of SPEC 2.3. */
function issueTokens(user, family, ip, nowMs) {
  const raw = randomBytes(32).toString('base64url');
  const id = family.id ?? randomUUID();
  const createdAt = new Date(nowMs).toISOString();
  const expiresAt = new Date(nowMs + REFRESH_TTL_MS).toISOString();
  sql.insertToken.run(
    id,
    sha256(raw),
    user.id,
    family.familyId ?? id,
    family.generation,
    expiresAt,
    createdAt,
    ip,
  );
  const access = signAccessToken(user, nowMs);
  return {
    accessToken: access.token,
    refreshToken: raw,
    accessTokenExpiry: new Date(access.exp * 1000).toISOString(),
    user: publicUser(user),
  };
}

// better-sqlite3 is synchronous, so each transaction runs whole between two awaits.
const register = db.transaction((user, ip, nowMs) => {
  sql.insertUser.run(user.id, user.username, user.email, user.passwordHash, user.createdAt);
  return issueTokens(user, { generation: 0 }, ip, nowMs);
});
const loginSucceeded = db.transaction((user, ip, nowMs) => {
  sql.loginSucceeded.run(new Date(nowMs).toISOString(), user.id);
  return issueTokens(user, { generation: 0 }, ip, nowMs);
});
const rotate = db.transaction((token, user, ip, nowMs) => {
  const id = randomUUID();
  const revoked = sql.rotateOut.run(new Date(nowMs).toISOString(), ip, id, token.id);
  if (revoked.changes !== 1) {
    return null;
  }
  const family = { id, familyId: token.familyId, generation: token.generation + 1 };
  return issueTokens(user, family, ip, nowMs);
});

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
  if (sql.userByEmail.get(normalized)) {
    return fail(reply, 409, 'Ya existe una cuenta con ese email.');
  }
  const now = Date.now();
  const user = {
    id: randomUUID(),
    username,
    email: normalized,
    passwordHash: await hashPassword(password),
    createdAt: new Date(now).toISOString(),
  };
  try {
    reply.code(201);
    return register(user, request.ip, now);
  } catch (error) {
    if (error.code === 'SQLITE_CONSTRAINT_UNIQUE') {
      return fail(reply, 409, 'Ya existe una cuenta con ese email.');
    }
    throw error;
  }
});

app.post('/api/auth/login', async (request, reply) => {
  const { email, password } = request.body ?? {};
  if (typeof email !== 'string' || typeof password !== 'string') {
    return fail(reply, 400, 'Invalid request');
  }
  const user = sql.userByEmail.get(email.trim().toLowerCase());
  const isCorrect = await verifyPassword(password, user?.passwordHash ?? (await dummyHash));
  if (!user || !isCorrect) {
    if (user) {
      sql.loginFailed.run(user.id);
    }
    return fail(reply, 401, 'Credenciales inválidas.');
  }
  return loginSucceeded(user, request.ip, Date.now());
});

app.post('/api/auth/refresh', (request, reply) => {
  const raw = request.body?.refreshToken;
  const token = typeof raw === 'string' ? sql.tokenByHash.get(sha256(raw)) : undefined;
  if (!token || token.isRevoked || Date.parse(token.expiresAt) <= Date.now()) {
    return fail(reply, 401, 'Refresh token inválido.');
  }
  const response = rotate(token, sql.userById.get(token.userId), request.ip, Date.now());
  return response ?? fail(reply, 401, 'Refresh token revocado.');
});

app.get('/api/auth/me', (request, reply) => {
  const header = request.headers.authorization;
  const claims = header?.startsWith('Bearer ') ? verifyAccessToken(header.slice(7)) : null;
  if (!claims) {
    reply.code(401);
    return { status: 401, message: 'Unauthorized' };
  }
  const user = sql.userById.get(claims.sub);
  if (!user) {
    return fail(reply, 404, 'Usuario no encontrado.');
  }
  return user.isActive ? publicUser(user) : fail(reply, 401, 'Cuenta desactivada.');
});

await app.listen({ port: Number(args.port), host: '127.0.0.1' });

process.once('SIGTERM', () => {
  void app.close().then(() => {
    db.close();
    process.exit(0);
  });
});
