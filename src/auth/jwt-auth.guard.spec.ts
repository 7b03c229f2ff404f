import { jest } from '@jest/globals';
import { UnauthorizedException, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';
import type { User } from '../users/entities/user.entity.js';
import type { UsersService } from '../users/users.service.js';
import { JwtAuthGuard } from './jwt-auth.guard.js';
import type { JwtStrategy } from './jwt.strategy.js';

const CLAIMS: AccessTokenClaims = {
  sub: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  email: 'alice@example.com',
  jti: '5b1c7a52-3d0e-4f3a-9a47-0b8e2c6d1f90',
};
const ACCOUNT = { id: CLAIMS.sub, isActive: true } as User;

const HANDLER = (): undefined => undefined;
class Controller {}

function contextFor(request: object): ExecutionContext {
  return {
    getHandler: () => HANDLER,
    getClass: () => Controller,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
  } as unknown as ExecutionContext;
}

describe(JwtAuthGuard.name, () => {
  const passport = jest.spyOn(AuthGuard('jwt').prototype, 'canActivate');
  const usersService = {
    requireActiveAccount: jest.fn(() => Promise.resolve(ACCOUNT)),
  } as unknown as UsersService;

  afterEach(() => passport.mockReset());
  afterAll(() => passport.mockRestore());

  function guardRemembering(claims: AccessTokenClaims | null | undefined): JwtAuthGuard {
    const strategy = { rememberedClaims: () => claims } as unknown as JwtStrategy;
    return new JwtAuthGuard(new Reflector(), usersService, strategy);
  }

  it('should let a token verified before through without passport, with its claims and account', async () => {
    const request: Record<string, unknown> = {};

    await expect(guardRemembering(CLAIMS).canActivate(contextFor(request))).resolves.toBe(true);

    expect(passport).not.toHaveBeenCalled();
    expect(request).toEqual({ user: CLAIMS, account: ACCOUNT });
  });

  it('should refuse a token verified before that has expired since, without passport', async () => {
    await expect(guardRemembering(null).canActivate(contextFor({}))).rejects.toBeInstanceOf(
      UnauthorizedException,
    );

    expect(passport).not.toHaveBeenCalled();
  });

  it('should hand any other token to passport-jwt', async () => {
    const request: Record<string, unknown> = {};
    passport.mockImplementation(() => {
      request.user = CLAIMS;
      return Promise.resolve(true);
    });

    await expect(guardRemembering(undefined).canActivate(contextFor(request))).resolves.toBe(true);

    expect(passport).toHaveBeenCalledTimes(1);
    expect(request).toEqual({ user: CLAIMS, account: ACCOUNT });
  });

  it("should read a route's @Public() mark once, and let its requests through untouched", async () => {
    const reflector = new Reflector();
    const read = jest.spyOn(reflector, 'getAllAndOverride').mockReturnValue(true);
    const strategy = { rememberedClaims: jest.fn() } as unknown as JwtStrategy;
    const guard = new JwtAuthGuard(reflector, usersService, strategy);
    const context = contextFor({});

    await expect(guard.canActivate(context)).resolves.toBe(true);
    await expect(guard.canActivate(context)).resolves.toBe(true);

    expect(read).toHaveBeenCalledTimes(1);
    expect(strategy.rememberedClaims).not.toHaveBeenCalled();
    expect(passport).not.toHaveBeenCalled();
  });
});
