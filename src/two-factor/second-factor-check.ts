import { Injectable } from '@nestjs/common';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import type { AuthenticationResponseDto } from '../passkeys/dto/authentication-response.dto.js';
import { PasskeyRefusal, Passkeys } from '../passkeys/passkeys.service.js';
import type { AuthMethod } from '../tokens/auth-methods.js';
import { TotpFactors } from './totp-factors.service.js';

/** What a sign-in's second step may carry: the factor's code, or an assertion of a passkey. */
export interface SecondFactorProof {
  readonly code?: string | null;
  readonly passkey?: AuthenticationResponseDto | null;
}

/**
 * The second step's verdict: `none` (no confirmed factor: nothing to check, anything sent is
 * ignored), `required` (a factor, and no proof sent), `bad_code`, a refused passkey, or the
 * methods the proof adds to `amr` (`otp`, or the passkey's).
 */
export type SecondFactorVerdict =
  'none' | 'required' | 'bad_code' | PasskeyRefusal | readonly AuthMethod[];

/**
 * The second factor of every sign-in that asks one (the password login, the provider sign-in's
 * code exchange): one place decides which proof counts and checks it. The caller decides what
 * a refusal costs (a failed login) and what it answers.
 */
@Injectable()
export class SecondFactorCheck {
  constructor(
    private readonly totpFactors: TotpFactors,
    private readonly passkeys: Passkeys,
  ) {}

  /**
   * A code is used up here (a TOTP step, a recovery code), before the sign-in is written: a code
   * that raced another request is refused rather than accepted twice. When passkeys are on,
   * `passkey` answers in place of `code` (and is used when both are sent); with passkeys off it
   * is ignored, as any unknown field.
   */
  async check(
    userId: string,
    { code, passkey }: SecondFactorProof,
    origin: RequestOrigin,
  ): Promise<SecondFactorVerdict> {
    const factor = await this.totpFactors.activeFactorOf(userId);
    if (factor === null) {
      return 'none';
    }
    if (passkey !== undefined && passkey !== null && this.passkeys.isEnabled) {
      const verified = await this.passkeys.verifyAssertion(
        passkey,
        { ceremony: 'second_factor', userId },
        origin,
      );
      return verified instanceof PasskeyRefusal ? verified : verified.authMethods;
    }
    if (code === undefined || code === null) {
      return 'required';
    }
    // A spent recovery code is recorded as it is spent (totp_recovery_code_used): the trail
    // shows when, so the owner can tell if it was not them.
    return (await this.totpFactors.redeem(factor, code, origin)) === null ? 'bad_code' : ['otp'];
  }
}
