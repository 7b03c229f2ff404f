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

function contextFor(request: object): ExecutionContext {
  return {
    getHandler: () => () => undefined,
    getClass: () => class {},
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
});
