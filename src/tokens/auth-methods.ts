/**
 * How a session was authenticated, as RFC 8176 names it in the `amr` claim: `pwd` (a password),
 * and `otp` as well once a second-factor code (a TOTP or a recovery code) was given.
 */
export type AuthMethod = 'pwd' | 'otp';

export const PASSWORD_ONLY: readonly AuthMethod[] = ['pwd'];
export const PASSWORD_AND_OTP: readonly AuthMethod[] = ['pwd', 'otp'];

/** Stored on each refresh token as space-separated names; null (older tokens) reads as `pwd`. */
export function storedAuthMethods(methods: readonly AuthMethod[]): string {
  return methods.join(' ');
}

export function parseAuthMethods(stored: string | null): readonly AuthMethod[] {
  if (stored === null) {
    return PASSWORD_ONLY;
  }
  const methods = stored.split(' ').filter((m): m is AuthMethod => m === 'pwd' || m === 'otp');
  return methods.length > 0 ? methods : PASSWORD_ONLY;
}
