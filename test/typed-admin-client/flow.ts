// A support tool on the admin API, through the client generated from admin-openapi.json
// (`openapi-typescript admin-openapi.json -o keygate-admin.d.ts` and `openapi-fetch`): the
// issue's "Done when" scenario. The test compiles it with tsc (strict) next to the generated
// types, runs it against a live service and reads the JSON it prints.
// Usage: node flow.js <base URL> <admin key> <e-mail> <audit key>.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './keygate-admin.js';

type ErrorBody = components['schemas']['ErrorResponseDto'];
type User = components['schemas']['AdminUserResponseDto'];

const [baseUrl = '', key = '', email = '', auditKey = ''] = process.argv.slice(2);

function clientWith(secret: string) {
  const client = createClient<paths>({ baseUrl });
  const bearer: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${secret}`);
      return request;
    },
  };
  client.use(bearer);
  return client;
}

const support = clientWith(key);
const auditor = clientWith(auditKey);
const steps: Record<string, unknown> = {};

const found = await support.GET('/api/admin/users', { params: { query: { email } } });
const users: User[] = found.data?.users ?? [];
const user = users[0];
if (user === undefined) {
  throw new Error('the account was not found');
}
steps['find'] = { status: found.response.status, count: users.length, isActive: user.isActive };

const details = await support.GET('/api/admin/users/{id}', { params: { path: { id: user.id } } });
steps['details'] = {
  status: details.response.status,
  activeSessionCount: details.data?.activeSessionCount,
};

const loggedOut = await support.POST('/api/admin/users/{id}/logout', {
  params: { path: { id: user.id } },
  body: { reason: 'Ticket 4711' },
});
steps['logout'] = {
  status: loggedOut.response.status,
  revokedSessions: loggedOut.data?.revokedSessions,
};

const refused = await support.POST('/api/admin/users/{id}/deactivate', {
  params: { path: { id: user.id } },
  body: {},
});
const refusal: ErrorBody | undefined = refused.error as ErrorBody | undefined;
steps['deactivate'] = { status: refused.response.status, message: refusal?.message };

const trail = await auditor.GET('/api/admin/audit', {
  params: { query: { userId: user.id, type: 'admin_sessions_revoked' } },
});
steps['audit'] = {
  status: trail.response.status,
  keys: (trail.data?.events ?? []).map((event) => event.details['adminKeyName']),
};

process.stdout.write(`${JSON.stringify(steps)}\n`);
