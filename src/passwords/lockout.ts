import type { User } from '../users/entities/user.entity.js';

/** Spec §8. */
export const MAX_FAILED_LOGINS = 5;
export const LOCKOUT_DURATION_MS = 15 * 60 * 1000;
const MINUTE_MS = 60 * 1000;
/** Spec §4.2: what an attempt right after a lockout starts is told to wait. */
export const FRESH_LOCKOUT_MINUTES = LOCKOUT_DURATION_MS / MINUTE_MS;

/** Spec §3.1: locked out while `lockoutEnd` is later than now. */
export function isLockedOut(
  user: Pick<User, 'lockoutEnd'>,
  now: Date,
): user is { lockoutEnd: Date } {
  return user.lockoutEnd !== null && user.lockoutEnd.getTime() > now.getTime();
}

/** Spec §4.2: whole minutes left, rounded down, plus one. */
export function remainingLockoutMinutes(lockoutEnd: Date, now: Date): number {
  return Math.floor((lockoutEnd.getTime() - now.getTime()) / MINUTE_MS) + 1;
}

/**
 * Spec §3.1, wrong password: the counter goes up and is kept even after an earlier lockout has
 * elapsed, so from the fifth failure on every failure (re)starts a lockout.
 */
export function afterFailedLogin(
  user: Pick<User, 'failedLoginAttempts' | 'lockoutEnd'>,
  now: Date,
): { failedLoginAttempts: number; lockoutEnd: Date | null; lockedOut: boolean } {
  const failedLoginAttempts = user.failedLoginAttempts + 1;
  const lockedOut = failedLoginAttempts >= MAX_FAILED_LOGINS;
  return {
    failedLoginAttempts,
    lockoutEnd: lockedOut ? new Date(now.getTime() + LOCKOUT_DURATION_MS) : user.lockoutEnd,
    lockedOut,
  };
}
