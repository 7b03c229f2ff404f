import { registerUser } from './factories/user.factory.js';
import { GreetingModule } from './extending/greeting.module.js';
import { useSharedTestApp } from './utils/create-test-app.js';
import { UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { decodeJwt } from './utils/jwt.js';
import { asInSource, codeShownFor } from './utils/page-code.js';

// The "Extending" example of docs/development.md, mounted into the real application: its files
// here are the page's code, so what the page promises about a team's own module is what is tested.

const MODULE_FILES = [
  'dto/greeting-response.dto.ts',
  'greeting.service.ts',
  'greeting.controller.ts',
  'greeting.module.ts',
];
const HELLO = '/api/greetings/hello';
const ME = '/api/greetings/me';

describe('Extending: a module added by a team', () => {
  const t = useSharedTestApp({ extensions: [{ module: GreetingModule }] });

  it.each(MODULE_FILES)(
    'should be the code docs/development.md shows for src/greeting/%s',
    (file) => {
      expect(codeShownFor('docs/development.md', `src/greeting/${file}`)).toBe(
        asInSource('extending', file),
      );
    },
  );

  it('should reject an anonymous call to a route without @Public() with the bare 401', async () => {
    const response = await t.get(ME);

    expect(response.status).toBe(401);
    expect(response.json()).toStrictEqual(UNAUTHORIZED_BODY);
  });

  it('should reject an invalid token on that route with the same bare 401', async () => {
    const response = await t.get(ME, 'not-a-jwt');

    expect(response.status).toBe(401);
    expect(response.json()).toStrictEqual(UNAUTHORIZED_BODY);
  });

  it('should answer an anonymous call to a @Public() route', async () => {
    const response = await t.get(HELLO);

    expect(response.status).toBe(200);
    expect(response.json()).toStrictEqual({ greeting: 'Hello, world!' });
  });

  it("should give the protected route the caller's identity from the access token", async () => {
    const user = await registerUser(t);

    const response = await t.get(ME, user.accessToken);

    expect(response.status).toBe(200);
    expect(response.json()).toStrictEqual({ greeting: `Hello, ${user.email}!`, userId: user.id });
    expect(decodeJwt(user.accessToken).payload).toMatchObject({ sub: user.id, email: user.email });
  });
});
