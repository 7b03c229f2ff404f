/**
 * How a session was authenticated, as RFC 8176 names it in the `amr` claim: `pwd` (a password),
 * and `otp` as well once a second-factor code (a TOTP or a recovery code) was given. `email`, a
 * code mailed to the account's address, has no RFC 8176 value: it is not `otp`, which a resource
 * server may read as the second factor (decision 0046). A passkey adds `hwk` (a key bound to one
 * device) or `swk` (a synced passkey, whose key can leave the device), and `user`, since every
 * passkey ceremony requires user verification.
 */
export type AuthMethod = 'pwd' | 'otp' | 'email' | 'hwk' | 'swk' | 'user' | 'fed';

export const PASSWORD_ONLY: readonly AuthMethod[] = ['pwd'];
export const EMAIL_CODE_ONLY: readonly AuthMethod[] = ['email'];
export const EMAIL_CODE_AND_OTP: readonly AuthMethod[] = ['email', 'otp'];
/** A sign-in through another identity provider; `fed` is no RFC 8176 value, as `email` is not. */
export const FEDERATED_ONLY: readonly AuthMethod[] = ['fed'];

const AUTH_METHODS: ReadonlySet<string> = new Set<AuthMethod>([
  'pwd',
  'otp',
  'email',
  'hwk',
  'swk',
  'user',
  'fed',
]);

/** What a passkey adds to `amr`: its kind of key, and the user verification it performed. */
export function passkeyMethods(isBackupEligible: boolean): readonly AuthMethod[] {
  return [isBackupEligible ? 'swk' : 'hwk', 'user'];
}

/** Stored on each refresh token as space-separated names; null (older tokens) reads as `pwd`. */
export function storedAuthMethods(methods: readonly AuthMethod[]): string {
  return methods.join(' ');
}

export function parseAuthMethods(stored: string | null): readonly AuthMethod[] {
  if (stored === null) {
    return PASSWORD_ONLY;
  }
  const methods = stored.split(' ').filter((m): m is AuthMethod => AUTH_METHODS.has(m));
  return methods.length > 0 ? methods : PASSWORD_ONLY;
}
