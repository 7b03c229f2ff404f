import { ConfirmingPassword } from '../../passwords/dto/password-confirmation.js';
import { SecondFactorCode } from './second-factor-code.js';

export class DisableTotpDto {
  /** The account's password, checked like a login's. @example "S3cure!pass" */
  @ConfirmingPassword()
  readonly password: string;

  /** A code of the authenticator app, or a recovery code. @example "123456" */
  @SecondFactorCode()
  readonly code: string;
}
