import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { RefreshToken } from '../src/tokens/entities/refresh-token.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { User } from '../src/users/entities/user.entity.js';
import { findFamily, findRefreshToken } from './factories/refresh-token.factory.js';
import {
  createUser,
  DEFAULT_PASSWORD,
  registerUser,
  reloadUser,
} from './factories/user.factory.js';
import { type TestResponse, useSharedTestApp } from './utils/create-test-app.js';
import {
  count,
  EMAIL_TAKEN,
  expectSerialLoginOutcome,
  INVALID_CREDENTIALS,
  isLockoutMessage,
  messages,
  REVOKED,
} from './utils/race-outcomes.js';
import { LOGIN, REFRESH, REGISTER, REVOKE } from './utils/routes.js';

describe('concurrency: outcomes equal some one-at-a-time order', () => {
  const t = useSharedTestApp();

  const login = (email: string, password: string): Promise<TestResponse> =>
    t.post(LOGIN, { email, password });

  describe('lockout', () => {
    it.each([10, 50, 200])(
      'should answer %i parallel wrong passwords with exactly 5 invalid-credential answers',
      async (n) => {
        const user = await createUser(t);
        const responses = await Promise.all(
          Array.from({ length: n }, () => login(user.email, 'Wrong!pass1')),
        );
        const texts = messages(responses);
        expect(responses.every((response) => response.status === 401)).toBe(true);
        expect(count(texts, INVALID_CREDENTIALS)).toBe(5);
        expect(texts.filter(isLockoutMessage)).toHaveLength(n - 5);
        expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(5);
      },
    );

    it('should answer a burst of 20 wrong passwords after an elapsed lockout with 1 invalid-credential answer', async () => {
      const user = await createUser(t, { failedLoginAttempts: 5, lockoutEnd: t.clock.now() });
      t.clock.advance(1);
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => login(user.email, 'Wrong!pass1')),
      );
      const texts = messages(responses);
      expect(count(texts, INVALID_CREDENTIALS)).toBe(1);
      expect(texts.filter(isLockoutMessage)).toHaveLength(19);
      expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(6);
    });

    it('should let 20 parallel correct logins all succeed with distinct refresh tokens', async () => {
      const user = await createUser(t);
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => login(user.email, DEFAULT_PASSWORD)),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
      const tokens = responses.map(
        (response) => response.json<{ refreshToken: string }>().refreshToken,
      );
      expect(new Set(tokens).size).toBe(20);
      expect(await reloadUser(t, user.id)).toMatchObject({
        failedLoginAttempts: 0,
        lockoutEnd: null,
      });
    });

    it('should give 49 wrong and 1 correct password an outcome of some serial order', async () => {
      const user = await createUser(t);
      const correctIndex = 17;
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          login(user.email, i === correctIndex ? DEFAULT_PASSWORD : 'Wrong!pass1'),
        ),
      );
      expectSerialLoginOutcome(responses, correctIndex);
      expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(5);
    });
  });

  describe('rotation', () => {
    it.each([2, 10, 50])(
      'should let exactly one of %i parallel refreshes of one token succeed',
      async (k) => {
        const { refreshToken } = await registerUser(t);
        const responses = await Promise.all(
          Array.from({ length: k }, () => t.post(REFRESH, { refreshToken })),
        );
        const winners = responses.filter((response) => response.status === 200);
        expect(winners).toHaveLength(1);
        expect(count(messages(responses), REVOKED)).toBe(k - 1);

        const original = await findRefreshToken(t, refreshToken);
        const family = await findFamily(t, original?.familyId ?? '');
        // One replacement row, never two; and reuse detection revoked the winner's new token.
        expect(family).toHaveLength(2);
        expect(family.every((token) => token.isRevoked)).toBe(true);
        expect(family[1].reasonRevoked).toBe('Token reuse detectado');
        const next = winners[0].json<{ refreshToken: string }>().refreshToken;
        const retry = await t.post(REFRESH, { refreshToken: next });
        expect(retry.status).toBe(401);
      },
    );

    it('should leave no active token in a chain when an old token is replayed while it rotates', async () => {
      const registered = await registerUser(t);
      let current = registered.refreshToken;
      let rotated = 0;
      const rotations = (async () => {
        for (let i = 0; i < 20; i += 1) {
          const response = await t.post(REFRESH, { refreshToken: current });
          if (response.status !== 200) {
            break;
          }
          rotated += 1;
          current = response.json<{ refreshToken: string }>().refreshToken;
        }
      })();
      await yieldToLoop();
      const replay = await t.post(REFRESH, { refreshToken: registered.refreshToken });
      await rotations;
      // The replay and the chain's first rotation are in flight together, so either may be the
      // one that takes the first token from active (on PostgreSQL nothing orders them).
      if (replay.status === 200) {
        // Serial order: the replay rotates the first token; the chain then presents it again.
        expect(rotated).toBe(0);
      } else {
        // Serial order: the chain rotates first; the replay presents a revoked token.
        expect(replay.json()).toMatchObject({ status: 401, message: REVOKED });
      }
      const first = await findRefreshToken(t, registered.refreshToken);
      const family = await findFamily(t, first?.familyId ?? '');
      expect(family.filter((token) => !token.isRevoked)).toHaveLength(0);
    });

    it('should never let a refresh and a revoke of one token both take it from active', async () => {
      for (let round = 0; round < 10; round += 1) {
        const user = await registerUser(t);
        const [refresh, revoke] = await Promise.all([
          t.post(REFRESH, { refreshToken: user.refreshToken }),
          t.post(REVOKE, { refreshToken: user.refreshToken, reason: 'logout' }, user.accessToken),
        ]);
        expect(revoke.status).toBe(200);
        const token = await findRefreshToken(t, user.refreshToken);
        const family = await findFamily(t, token?.familyId ?? '');
        if (refresh.status === 200) {
          // Serial order: refresh, then revoke of the rotated token, which ends the session.
          expect(token).toMatchObject({ reasonRevoked: 'Replaced by new token' });
          expect(family).toHaveLength(2);
        } else {
          // Serial order: revoke, then the refresh presents a revoked token.
          expect(refresh.json()).toMatchObject({ status: 401, message: REVOKED });
          expect(token).toMatchObject({ reasonRevoked: 'logout', replacedByTokenId: null });
          expect(family).toHaveLength(1);
        }
        expect(family.filter((member) => !member.isRevoked)).toHaveLength(0);
      }
    });
  });

  describe('registration', () => {
    it('should accept exactly one of 40 parallel registrations of one e-mail and its case variants', async () => {
      const variants = Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? 'race@example.com'
          : `RACE@Example.COM`.slice(0, 5 + (i % 5)) + 'race@example.com'.slice(5 + (i % 5)),
      );
      const responses = await Promise.all(
        variants.map((email, i) =>
          t.post(REGISTER, {
            username: `racer${i}`,
            email,
            password: DEFAULT_PASSWORD,
          }),
        ),
      );
      const statuses = responses.map((response) => response.status);
      expect(count(statuses.map(String), '201')).toBe(1);
      expect(count(statuses.map(String), '409')).toBe(39);
      expect(count(messages(responses), EMAIL_TAKEN)).toBe(39);
      expect(await t.dataSource.getRepository(User).countBy({ email: 'race@example.com' })).toBe(1);
    });
  });
});

describe('shared SQLite connection: a rolled-back unit never takes acknowledged writes with it', () => {
  const t = useSharedTestApp();

  it('should keep every acknowledged write while other units fail and roll back', async () => {
    // Registrations whose e-mail starts with "fail" insert their user (and session), yield to
    // the event loop (letting other requests' statements run), then fail, so their transaction
    // rolls back. The failure is written "alongside", which makes the start a transaction on
    // PostgreSQL too (decision 0034).
    const tokens = t.app.get(TokensService);
    const start = tokens.start.bind(tokens);
    tokens.start = (user, origin, how) =>
      start(
        user,
        origin,
        user.email.startsWith('fail')
          ? {
              ...how,
              alongside: async (manager) => {
                await how.alongside?.(manager);
                for (let i = 0; i < 5; i += 1) {
                  await yieldToLoop();
                }
                throw new Error('injected failure after the user insert');
              },
            }
          : how,
      );
    try {
      const target = await createUser(t);
      const requests = Array.from({ length: 60 }, (_, i) => {
        switch (i % 3) {
          case 0:
            return t.post(REGISTER, {
              username: `f${i}`,
              email: `fail${i}@example.com`,
              password: DEFAULT_PASSWORD,
            });
          case 1:
            return t.post(REGISTER, {
              username: `ok${i}`,
              email: `ok${i}@example.com`,
              password: DEFAULT_PASSWORD,
            });
          default:
            return t.post(LOGIN, { email: target.email, password: 'Wrong!pass1' });
        }
      });
      const responses = await Promise.all(requests);

      const failed = responses.filter((_, i) => i % 3 === 0);
      expect(failed.every((response) => response.status === 500)).toBe(true);
      const acknowledged = responses.filter((_, i) => i % 3 === 1);
      expect(acknowledged.every((response) => response.status === 201)).toBe(true);

      const users = t.dataSource.getRepository(User);
      for (let i = 1; i < 60; i += 3) {
        expect(await users.countBy({ email: `ok${i}@example.com` })).toBe(1);
      }
      expect(await users.count({ where: { username: 'f0' } })).toBe(0);
      const acknowledgedFailures = responses.filter(
        (response, i) =>
          i % 3 === 2 && response.json<{ message: string }>().message === INVALID_CREDENTIALS,
      ).length;
      expect(acknowledgedFailures).toBe(5);
      expect((await reloadUser(t, target.id)).failedLoginAttempts).toBe(5);
      expect(await t.dataSource.getRepository(RefreshToken).count()).toBe(20);
    } finally {
      tokens.start = start;
    }
  });
});
