import {
  afterFailedLogin,
  isLockedOut,
  LOCKOUT_DURATION_MS,
  remainingLockoutMinutes,
} from './lockout.js';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const at = (ms: number): Date => new Date(NOW.getTime() + ms);

describe('lockout rules', () => {
  it.each([
    [15 * 60_000, 16],
    [14 * 60_000 + 59_999, 15],
    [60_000, 2],
    [59_999, 1],
    [1, 1],
  ])('should report %i ms left as %i minute(s)', (left, minutes) => {
    expect(remainingLockoutMinutes(at(left), NOW)).toBe(minutes);
  });

  it('should be locked only while lockoutEnd is later than now', () => {
    expect(isLockedOut({ lockoutEnd: at(1) }, NOW)).toBe(true);
    expect(isLockedOut({ lockoutEnd: NOW }, NOW)).toBe(false);
    expect(isLockedOut({ lockoutEnd: null }, NOW)).toBe(false);
  });

  it.each([0, 1, 2, 3])('should not lock after failure number %i + 1', (before) => {
    const next = afterFailedLogin({ failedLoginAttempts: before, lockoutEnd: null }, NOW);
    expect(next).toEqual({ failedLoginAttempts: before + 1, lockoutEnd: null, lockedOut: false });
  });

  it('should lock for 15 minutes on the fifth failure', () => {
    const next = afterFailedLogin({ failedLoginAttempts: 4, lockoutEnd: null }, NOW);
    expect(next).toEqual({
      failedLoginAttempts: 5,
      lockoutEnd: at(LOCKOUT_DURATION_MS),
      lockedOut: true,
    });
  });

  it('should lock again on the first failure after an elapsed lockout, keeping the count', () => {
    const next = afterFailedLogin({ failedLoginAttempts: 5, lockoutEnd: at(-1) }, NOW);
    expect(next).toEqual({
      failedLoginAttempts: 6,
      lockoutEnd: at(LOCKOUT_DURATION_MS),
      lockedOut: true,
    });
  });
});
