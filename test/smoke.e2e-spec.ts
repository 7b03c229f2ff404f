import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { authResponse } from './utils/expected-bodies.js';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('should register', async () => {
    const res = await t.post('/api/auth/register', { username: 'a', email: 'A@x.com', password: 'S3cure!pass' });
    expect(res.status).toBe(201);
    expect(res.json()).toEqual(authResponse({ username: 'a', email: 'a@x.com' }));
  });
});
