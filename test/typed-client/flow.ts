// A front end's whole session with Keygate, up to the account's deletion, through the client
// generated from openapi.json: `openapi-typescript openapi.json -o keygate.d.ts` and
// `openapi-fetch`. The test compiles it with tsc (strict) next to the generated types, runs it
// against a live service and reads the JSON it prints. Usage: node flow.js <base URL>.
import { randomUUID } from 'node:crypto';
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './keygate.js';

type AuthResponse = components['schemas']['AuthResponseDto'];
type ErrorBody = components['schemas']['ErrorResponseDto'];
type ProblemDetails = components['schemas']['ProblemDetailsResponseDto'];

/** A failure is the error body, or problem details when the body failed validation. */
function messageOf(error: ErrorBody | ProblemDetails | undefined): string | undefined {
  return error !== undefined && 'message' in error ? error.message : undefined;
}

const [baseUrl = ''] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl });

/** The access token of the current pair: kept in memory only, sent on every request. */
let accessToken: string | undefined;
const bearer: Middleware = {
  onRequest({ request }) {
    if (accessToken !== undefined) {
      request.headers.set('Authorization', `Bearer ${accessToken}`);
    }
    return request;
  },
};
client.use(bearer);

function keep(pair: AuthResponse): string {
  accessToken = pair.accessToken;
  return pair.refreshToken;
}

function required<T>(data: T | undefined, step: string): T {
  if (data === undefined) {
    throw new Error(`${step} failed`);
  }
  return data;
}

const email = `typed-${randomUUID()}@example.com`;
const password = 'S3cure!pass';
const steps: Record<string, unknown> = {};

const registered = await client.POST('/api/auth/register', {
  body: { username: 'typed', email, password },
});
const firstSession = keep(required(registered.data, 'register'));
steps.register = { status: registered.response.status, email: registered.data?.user.email };

const loggedIn = await client.POST('/api/auth/login', { body: { email, password } });
let refreshToken = keep(required(loggedIn.data, 'login'));
steps.login = {
  status: loggedIn.response.status,
  sameUser: loggedIn.data?.user.id === registered.data?.user.id,
};

const me = await client.GET('/api/auth/me');
steps.me = { status: me.response.status, username: me.data?.username };

const refreshed = await client.POST('/api/auth/refresh', { body: { refreshToken } });
const previous = refreshToken;
refreshToken = keep(required(refreshed.data, 'refresh'));
const expiry: string = required(refreshed.data, 'refresh').accessTokenExpiry;
steps.refresh = {
  status: refreshed.response.status,
  rotated: refreshToken !== previous,
  expiry: new Date(expiry).toISOString() === expiry,
};

const listed = await client.GET('/api/auth/sessions', {
  params: { header: { 'X-Refresh-Token': refreshToken } },
});
const sessions = required(listed.data, 'listSessions').sessions;
steps.listSessions = {
  status: listed.response.status,
  count: sessions.length,
  current: sessions.filter((session) => session.current).length,
};

const revokedAll = await client.POST('/api/auth/sessions/revoke-all', {
  body: { keepCurrent: true, refreshToken },
});
steps.revokeAllSessions = {
  status: revokedAll.response.status,
  revokedSessions: revokedAll.data?.revokedSessions,
};

const replay = await client.POST('/api/auth/refresh', { body: { refreshToken: previous } });
steps.replay = { status: replay.response.status, message: messageOf(replay.error) };

const fresh = await client.POST('/api/auth/login', { body: { email, password } });
refreshToken = keep(required(fresh.data, 'login again'));
const loggedOut = await client.POST('/api/auth/revoke', {
  body: { refreshToken, reason: 'logout' },
});
steps.revoke = { status: loggedOut.response.status, message: loggedOut.data?.message };

const afterLogout = await client.POST('/api/auth/refresh', { body: { refreshToken } });
steps.refreshAfterLogout = {
  status: afterLogout.response.status,
  message: messageOf(afterLogout.error),
};

// The account: a new password keeps this session and ends the others; then it is deleted.
const again = await client.POST('/api/auth/login', { body: { email, password } });
refreshToken = keep(required(again.data, 'login for the account steps'));
const newPassword = 'N3w!secure';
const changed = await client.POST('/api/auth/password/change', {
  body: { currentPassword: password, newPassword },
});
steps.changePassword = { status: changed.response.status, message: changed.data?.message };
const kept = await client.POST('/api/auth/refresh', { body: { refreshToken } });
refreshToken = keep(required(kept.data, 'refresh after the password change'));
steps.refreshAfterPasswordChange = kept.response.status;
const deleted = await client.DELETE('/api/auth/me', { body: { password: newPassword } });
steps.deleteAccount = { status: deleted.response.status, message: deleted.data?.message };
const gone = await client.GET('/api/auth/me');
steps.meAfterDelete = { status: gone.response.status, message: messageOf(gone.error) };

accessToken = undefined;
const anonymous = await client.GET('/api/auth/me');
steps.anonymousMe = {
  status: anonymous.response.status,
  message: messageOf(anonymous.error),
  challenge: anonymous.response.headers.get('WWW-Authenticate'),
};

const invalid = await client.POST('/api/auth/register', {
  body: { username: 'typed', email: 'not-an-e-mail', password },
});
steps.invalidRegister = {
  status: invalid.response.status,
  fields: Object.keys(
    invalid.error !== undefined && 'errors' in invalid.error ? invalid.error.errors : {},
  ),
};
steps.firstSessionEnded = (
  await client.POST('/api/auth/refresh', { body: { refreshToken: firstSession } })
).response.status;

process.stdout.write(`${JSON.stringify(steps)}\n`);

/** Never called: what the generated types refuse, so that tsc proves they are not `any`. */
export function refusedByTheTypes(): void {
  // @ts-expect-error login needs a password
  void client.POST('/api/auth/login', { body: { email } });
  // @ts-expect-error no such path
  void client.GET('/api/auth/nothing');
  // @ts-expect-error me is a GET
  void client.POST('/api/auth/me');
  // @ts-expect-error deleting the account needs the password
  void client.DELETE('/api/auth/me', { body: {} });
  // @ts-expect-error a session's id is a string
  const id: number = sessions[0]?.id ?? 0;
  void id;
}
