// What the load generator sends, and the accounts and tokens it needs. Every server is seeded
// through its own HTTP API, so the service and the baseline start from the same kind of data.
import { request } from 'node:http';

/** Meets the service's password policy (upper, lower, digit, special, 8+). */
const PASSWORD = 'S3cure!bench-pass';
const JSON_HEADERS = { 'content-type': 'application/json' };
/** Seeding runs this many requests at once: enough to keep both cores hashing. */
const SEED_CONCURRENCY = 4;
/** A pool larger than this has tokens to spare; more harvested tokens are dropped. */
const POOL_LIMIT = 2_000;

/**
 * Refresh tokens that have never been presented. Each refresh takes one and, when it succeeds,
 * gives back the one it received, so a token is used exactly once. Tokens whose request was cut
 * off at the end of a run are consumed server-side but never come back; logins and
 * registrations top the pool up (harvest), and ensureRefreshTokens fills any gap before a run.
 */
export class TokenPool {
  #tokens = [];
  /** Requests that found the pool empty and were sent with a token known to be invalid. */
  starved = 0;

  take() {
    return this.#tokens.pop();
  }

  give(token) {
    if (this.#tokens.length < POOL_LIMIT) {
      this.#tokens.push(token);
    }
  }

  get size() {
    return this.#tokens.length;
  }
}

/** The accounts and tokens the load for one SUT uses. */
export function createState(label) {
  return {
    label,
    users: [], // { email, accessToken }
    victim: null, // an account that the stability run hits with wrong passwords
    refreshTokens: new TokenPool(),
    nextLogin: 0,
    registrations: 0,
  };
}

/** GET /me with the access tokens of the first few users, prebuilt: no per-request work. */
export function meRequests(state, count = 8) {
  return state.users.slice(0, count).map((user) => ({
    method: 'GET',
    path: '/api/auth/me',
    headers: { authorization: `Bearer ${user.accessToken}` },
  }));
}

/** POST /refresh, each with a never-used token from the pool. */
export function refreshRequest(state) {
  const pool = state.refreshTokens;
  return {
    method: 'POST',
    path: '/api/auth/refresh',
    headers: JSON_HEADERS,
    setupRequest: (request) => {
      let token = pool.take();
      if (token === undefined) {
        pool.starved++;
        token = 'pool-exhausted';
      }
      return { ...request, body: JSON.stringify({ refreshToken: token }) };
    },
    onResponse: harvest(state),
  };
}

/**
 * POST /login, spreading the attempts over every seeded account in turn: the service takes
 * one account's logins one at a time (AccountLock), so a single account would measure the
 * lock, not the hashing.
 */
export function loginRequest(state) {
  return {
    method: 'POST',
    path: '/api/auth/login',
    headers: JSON_HEADERS,
    setupRequest: (request) => {
      const user = state.users[state.nextLogin++ % state.users.length];
      return { ...request, body: JSON.stringify({ email: user.email, password: PASSWORD }) };
    },
    onResponse: harvest(state),
  };
}

/** POST /register with a new e-mail every time. */
export function registerRequest(state) {
  return {
    method: 'POST',
    path: '/api/auth/register',
    headers: JSON_HEADERS,
    setupRequest: (request) => ({
      ...request,
      body: JSON.stringify(newAccount(state, `load-${++state.registrations}`)),
    }),
    onResponse: harvest(state),
  };
}

/** POST /login with a wrong password for the victim: lockout after 5, cheap 401s after that. */
export function wrongPasswordRequest(state) {
  return {
    method: 'POST',
    path: '/api/auth/login',
    headers: JSON_HEADERS,
    body: JSON.stringify({ email: state.victim.email, password: 'Wrong!pass-1' }),
  };
}

/**
 * The stability mix, one cycle of 20: 15 GET /me (M), 4 refreshes (R), 1 wrong-password
 * login (L). Each connection runs the cycle in order, over and over.
 */
export function mixedRequests(state) {
  const me = meRequests(state);
  let nextMe = 0;
  const make = {
    M: () => me[nextMe++ % me.length],
    R: () => refreshRequest(state),
    L: () => wrongPasswordRequest(state),
  };
  return [...'MMMMRMMMMRMMMMRMMMRL'].map((kind) => ({ ...make[kind]() }));
}

/** Successful auth responses carry a fresh refresh token: keep it for the refresh scenario. */
function harvest(state) {
  return (status, body) => {
    if (status === 200 || status === 201) {
      state.refreshTokens.give(JSON.parse(body).refreshToken);
    }
  };
}

function newAccount(state, suffix) {
  return {
    username: `bench ${suffix}`,
    email: `bench-${state.label}-${suffix}@example.com`,
    password: PASSWORD,
  };
}

/** Registers `count` users (and the victim) through the API; keeps their tokens. */
export async function seed(state, baseUrl, count) {
  await inBatches(count, async (i) => {
    const body = await post(baseUrl, '/api/auth/register', newAccount(state, `seed-${i}`), 201);
    state.users.push({ email: body.user.email, accessToken: body.accessToken });
    state.refreshTokens.give(body.refreshToken);
  });
  const victim = await post(baseUrl, '/api/auth/register', newAccount(state, 'victim'), 201);
  state.victim = { email: victim.user.email };
}

/** Logs seeded users in until the pool holds at least `minimum` unused refresh tokens. */
export async function ensureRefreshTokens(state, baseUrl, minimum) {
  const missing = minimum - state.refreshTokens.size;
  if (missing <= 0) {
    return;
  }
  await inBatches(missing, async (i) => {
    const user = state.users[i % state.users.length];
    const body = await post(
      baseUrl,
      '/api/auth/login',
      { email: user.email, password: PASSWORD },
      200,
    );
    state.refreshTokens.give(body.refreshToken);
  });
}

async function inBatches(count, task) {
  for (let start = 0; start < count; start += SEED_CONCURRENCY) {
    const batch = [];
    for (let i = start; i < Math.min(count, start + SEED_CONCURRENCY); i++) {
      batch.push(task(i));
    }
    await Promise.all(batch);
  }
}

/**
 * One POST with its own connection (no keep-alive agent), so that seeding leaves no idle
 * sockets behind in the server to blur its file-descriptor count.
 */
function post(baseUrl, path, body, expectedStatus) {
  return new Promise((resolve, reject) => {
    const req = request(
      baseUrl + path,
      { method: 'POST', headers: JSON_HEADERS, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          if (res.statusCode === expectedStatus) {
            resolve(JSON.parse(text));
          } else {
            reject(
              new Error(`POST ${path} answered ${res.statusCode}, not ${expectedStatus}: ${text}`),
            );
          }
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
