import { SecondFactorCode } from './second-factor-code.js';

export class TotpCodeDto {
  /**
   * The six digits the authenticator app shows now; where a factor is already on, one of its
   * recovery codes works too (and is spent). @example "123456"
   */
  @SecondFactorCode()
  readonly code: string;
}
