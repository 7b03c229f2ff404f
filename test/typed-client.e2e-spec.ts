import { useSharedTestApp } from './utils/create-test-app.js';
import { TYPED_CLIENT_TIMEOUT_MS, useTypedClient } from './utils/typed-client.js';

// What a front-end team does with the contract: generate a typed client from openapi.json
// (openapi-typescript + openapi-fetch), type-check its own code against it with tsc, and run it.
// test/typed-client/flow.ts goes through the whole flow, from registration to logout, then
// changes the password and deletes the account.

describe('A client generated from openapi.json', () => {
  const t = useSharedTestApp();
  const client = useTypedClient('typed-client');

  it(
    'should type-check and drive register, login, me, refresh, sessions, revoke-all, logout, a password change and the deletion',
    async () => {
      const stdout = await client.generateCheckAndRun('openapi.json', 'keygate.d.ts', [t.baseUrl]);

      expect(JSON.parse(stdout)).toEqual({
        register: { status: 201, email: expect.stringMatching(/^typed-.+@example\.com$/) },
        login: { status: 200, sameUser: true },
        me: { status: 200, username: 'typed' },
        refresh: { status: 200, rotated: true, expiry: true },
        listSessions: { status: 200, count: 2, current: 1 },
        revokeAllSessions: { status: 200, revokedSessions: 1 },
        replay: { status: 401, message: 'Refresh token revocado.' },
        revoke: { status: 200, message: 'Token revocado exitosamente.' },
        refreshAfterLogout: { status: 401, message: 'Refresh token revocado.' },
        changePassword: { status: 200, message: 'Contraseña actualizada exitosamente.' },
        refreshAfterPasswordChange: 200,
        deleteAccount: { status: 200, message: 'Cuenta eliminada exitosamente.' },
        meAfterDelete: { status: 404, message: 'Usuario no encontrado.' },
        anonymousMe: { status: 401, message: 'Unauthorized', challenge: 'Bearer' },
        invalidRegister: { status: 400, fields: ['email'] },
        firstSessionEnded: 401,
      });
    },
    TYPED_CLIENT_TIMEOUT_MS,
  );
});
