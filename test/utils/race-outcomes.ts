import type { TestResponse } from './http.js';

/** Literal SPEC texts the race tests count. */
export const INVALID_CREDENTIALS = 'Credenciales inválidas.';
export const REVOKED = 'Refresh token revocado.';
export const EMAIL_TAKEN = 'Ya existe una cuenta con ese email.';
const LOCKED_15 = 'Cuenta bloqueada temporalmente. Intenta en 15 minuto(s).';
const LOCKED_16 = 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).';

/** The `message` of each response ('' when there is none). */
export function messages(responses: readonly TestResponse[]): string[] {
  return responses.map((response) => response.json<{ message?: string }>().message ?? '');
}

export function count<T>(values: readonly T[], wanted: T): number {
  return values.filter((value) => value === wanted).length;
}

/** Right after a lockout starts 16 minutes are reported; a moment later, 15. */
export function isLockoutMessage(message: string): boolean {
  return message === LOCKED_15 || message === LOCKED_16;
}

/**
 * 49 wrong passwords and 1 correct one, sent together to a fresh account, must end as some
 * serial order would: either fewer than 5 wrong ones come first, the correct one succeeds and
 * resets the counter, and 5 more lock the account; or 5 wrong ones lock it before the correct
 * one arrives, which then gets the lockout answer.
 */
export function expectSerialLoginOutcome(
  responses: readonly TestResponse[],
  correctIndex: number,
): void {
  const correct = responses[correctIndex];
  const wrong = messages(responses.filter((_, i) => i !== correctIndex));
  const invalid = count(wrong, INVALID_CREDENTIALS);
  expect(invalid + wrong.filter(isLockoutMessage).length).toBe(responses.length - 1);
  if (correct.status === 200) {
    expect(invalid).toBeGreaterThanOrEqual(5);
    expect(invalid).toBeLessThanOrEqual(9);
  } else {
    expect(correct.status).toBe(401);
    expect(isLockoutMessage(correct.json<{ message: string }>().message)).toBe(true);
    expect(invalid).toBe(5);
  }
}
