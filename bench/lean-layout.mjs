// `node bench/lean-layout.mjs`: bytes per refresh of the table layout proposed in
// docs/decisions/0024-lean-token-rows.md, against a replica of the current one, on SQLite
// (dbstat), without the service: the refresh's writes are replayed with SQL, with the values the
// service writes (UUID text ids, SHA-256 digests, TypeORM's datetime text, the audit row of a
// `token_refreshed` event), over 8 sessions rotated 10,000 times in all, the shape of
// `npm run bench -- --row-bytes`. The replica's total is checked against that run's
// (bench/results/latest-row-bytes.json), so the proposal's figure can be trusted as far as the
// replica matches. A sketch for a decision, not a measurement of the service.
import { Buffer } from 'node:buffer';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';
import Database from 'better-sqlite3';

const REFRESHES = 10_000;
const SESSIONS = 8;
const DAY_MS = 24 * 60 * 60 * 1000;
const IP = '127.0.0.1';
const USER_AGENT = 'node';

const CURRENT = `
CREATE TABLE "refresh_tokens" ("id" varchar(36) PRIMARY KEY NOT NULL, "tokenHash" varchar(64) NOT NULL,
  "userId" varchar(36) NOT NULL, "familyId" varchar(36) NOT NULL, "generation" integer NOT NULL,
  "expiresAt" datetime NOT NULL, "createdAt" datetime NOT NULL, "createdByIp" varchar(64) NOT NULL,
  "isRevoked" boolean NOT NULL DEFAULT (false), "revokedAt" datetime, "revokedByIp" varchar(64),
  "reasonRevoked" varchar(500), "replacedByTokenId" varchar(36), "createdByUserAgent" varchar(256),
  "sessionStartedAt" datetime NOT NULL, "authMethods" varchar(32));
CREATE INDEX "IDX_refresh_tokens_family" ON "refresh_tokens" ("familyId", "generation");
CREATE INDEX "IDX_refresh_tokens_userId" ON "refresh_tokens" ("userId");
CREATE UNIQUE INDEX "IDX_refresh_tokens_tokenHash" ON "refresh_tokens" ("tokenHash");
CREATE INDEX "IDX_refresh_tokens_expiresAt" ON "refresh_tokens" ("expiresAt");
CREATE TABLE "auth_events" ("id" varchar(36) PRIMARY KEY NOT NULL, "occurredAt" datetime NOT NULL,
  "type" varchar(40) NOT NULL, "userId" varchar(36), "email" varchar(254), "ip" varchar(64) NOT NULL,
  "userAgent" varchar(256), "requestId" varchar(128) NOT NULL, "details" text NOT NULL);
CREATE INDEX "IDX_auth_events_userId_occurredAt" ON "auth_events" ("userId", "occurredAt");
CREATE INDEX "IDX_auth_events_occurredAt" ON "auth_events" ("occurredAt");
`;

// Sessions: one row per login, its facts once; rotation moves its newest generation and last use
// in place (a compare-and-set on "generation": exactly one of concurrent rotations wins). Tokens:
// one row per refresh, the digest as bytes, keyed by it; a token is active when its generation is
// its session's and the session has not ended. Audit: the time-ordered id as 16 bytes serves the
// retention purge and the export (no occurredAt index), the user agent as a reference.
const LEAN = `
CREATE TABLE "sessions" ("id" varchar(36) PRIMARY KEY NOT NULL, "userId" varchar(36) NOT NULL,
  "startedAt" datetime NOT NULL, "authMethods" varchar(32), "generation" integer NOT NULL,
  "lastUsedAt" datetime NOT NULL, "lastIp" varchar(64) NOT NULL, "lastUserAgent" varchar(256),
  "expiresAt" datetime NOT NULL, "endedAt" datetime, "endedByIp" varchar(64), "endReason" varchar(500));
CREATE INDEX "IDX_sessions_userId" ON "sessions" ("userId");
CREATE INDEX "IDX_sessions_expiresAt" ON "sessions" ("expiresAt");
CREATE TABLE "refresh_tokens" ("tokenHash" blob PRIMARY KEY NOT NULL, "sessionId" varchar(36) NOT NULL,
  "generation" integer NOT NULL, "createdAt" datetime NOT NULL) WITHOUT ROWID;
CREATE INDEX "IDX_refresh_tokens_session" ON "refresh_tokens" ("sessionId", "generation");
CREATE TABLE "user_agents" ("id" integer PRIMARY KEY, "value" varchar(256) NOT NULL UNIQUE);
CREATE TABLE "auth_events" ("id" blob PRIMARY KEY NOT NULL, "type" varchar(40) NOT NULL,
  "userId" varchar(36), "email" varchar(254), "ip" varchar(64) NOT NULL, "userAgentId" integer,
  "requestId" varchar(128) NOT NULL, "details" text NOT NULL) WITHOUT ROWID;
CREATE INDEX "IDX_auth_events_userId_id" ON "auth_events" ("userId", "id");
`;

const datetime = (ms) => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
const digest = () => createHash('sha256').update(randomBytes(32)).digest();
const timeOrderedId = (ms) =>
  Buffer.concat([Buffer.from(ms.toString(16).padStart(12, '0'), 'hex'), randomBytes(10)]);

function measure(ddl, { start, refresh }) {
  const db = new Database(':memory:');
  db.exec(ddl);
  const sizes = () =>
    new Map(
      db
        .prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name')
        .all()
        .map((row) => [row.name, row.bytes]),
    );
  const now = Date.now();
  const sessions = Array.from({ length: SESSIONS }, () => start(db, now));
  const before = sizes();
  for (let i = 0; i < REFRESHES; i++) {
    refresh(db, sessions[i % SESSIONS], now + i * 10);
  }
  const objects = [...sizes()]
    .map(([name, bytes]) => ({ name, bytes: (bytes - (before.get(name) ?? 0)) / REFRESHES }))
    .filter((object) => object.bytes > 0 && object.name !== 'sqlite_schema');
  db.close();
  return { objects, total: objects.reduce((sum, object) => sum + object.bytes, 0) };
}

function auditDetails(session, tokenId, replacedByTokenId) {
  return JSON.stringify({ familyId: session.id, tokenId, replacedByTokenId });
}

const current = measure(CURRENT, {
  start: (db, now) => {
    const session = { id: randomUUID(), userId: randomUUID(), generation: 0, startedAt: now };
    session.tokenId = session.id;
    insertCurrentToken(db, session, now);
    return session;
  },
  refresh: (db, session, now) => {
    const next = randomUUID();
    db.prepare(
      'UPDATE refresh_tokens SET "isRevoked" = 1, "revokedAt" = ?, "revokedByIp" = ?, ' +
        '"reasonRevoked" = ?, "replacedByTokenId" = ? WHERE id = ? AND "isRevoked" = 0',
    ).run(datetime(now), IP, 'Replaced by new token', next, session.tokenId);
    const replaced = session.tokenId;
    session.tokenId = next;
    session.generation += 1;
    insertCurrentToken(db, session, now);
    db.prepare('INSERT INTO auth_events VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?)').run(
      randomUUID(),
      datetime(now),
      'token_refreshed',
      session.userId,
      IP,
      USER_AGENT,
      randomUUID(),
      auditDetails(session, replaced, next),
    );
  },
});

function insertCurrentToken(db, session, now) {
  db.prepare(
    'INSERT INTO refresh_tokens VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, NULL, NULL, NULL, ?, ?, ?)',
  ).run(
    session.tokenId,
    digest().toString('hex'),
    session.userId,
    session.id,
    session.generation,
    datetime(now + 7 * DAY_MS),
    datetime(now),
    IP,
    USER_AGENT,
    datetime(session.startedAt),
    'pwd',
  );
}

const lean = measure(LEAN, {
  start: (db, now) => {
    const session = { id: randomUUID(), userId: randomUUID(), generation: 0 };
    db.prepare('INSERT OR IGNORE INTO user_agents (value) VALUES (?)').run(USER_AGENT);
    db.prepare('INSERT INTO sessions VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, NULL, NULL, NULL)').run(
      session.id,
      session.userId,
      datetime(now),
      'pwd',
      datetime(now),
      IP,
      USER_AGENT,
      datetime(now + 7 * DAY_MS),
    );
    db.prepare('INSERT INTO refresh_tokens VALUES (?, ?, 0, ?)').run(
      digest(),
      session.id,
      datetime(now),
    );
    return session;
  },
  refresh: (db, session, now) => {
    const { changes } = db
      .prepare(
        'UPDATE sessions SET generation = ?, "lastUsedAt" = ?, "lastIp" = ?, "lastUserAgent" = ?, ' +
          '"expiresAt" = ? WHERE id = ? AND generation = ? AND "endedAt" IS NULL',
      )
      .run(
        session.generation + 1,
        datetime(now),
        IP,
        USER_AGENT,
        datetime(now + 7 * DAY_MS),
        session.id,
        session.generation,
      );
    if (changes !== 1) {
      throw new Error('lost a rotation');
    }
    session.generation += 1;
    db.prepare('INSERT INTO refresh_tokens VALUES (?, ?, ?, ?)').run(
      digest(),
      session.id,
      session.generation,
      datetime(now),
    );
    const agent = db.prepare('SELECT id FROM user_agents WHERE value = ?').get(USER_AGENT).id;
    db.prepare('INSERT INTO auth_events VALUES (?, ?, ?, NULL, ?, ?, ?, ?)').run(
      timeOrderedId(now),
      'token_refreshed',
      session.userId,
      IP,
      agent,
      randomUUID(),
      auditDetails(session, randomUUID(), randomUUID()),
    );
  },
});

const measured = (() => {
  try {
    const path = new URL('./results/latest-row-bytes.json', import.meta.url);
    return JSON.parse(readFileSync(path, 'utf8')).bytesPerRefresh;
  } catch {
    return undefined;
  }
})();

const print = (label, result) => {
  process.stdout.write(`${label}: ${Math.round(result.total)} bytes per refresh\n`);
  for (const object of result.objects) {
    process.stdout.write(`  ${object.name.padEnd(36)} ${object.bytes.toFixed(1)}\n`);
  }
};
print('current layout (replica)', current);
if (measured !== undefined) {
  process.stdout.write(`  (the service measured ${measured} by --row-bytes)\n`);
}
print('lean layout (decision 0024)', lean);
