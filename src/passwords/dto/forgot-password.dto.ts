import { RegistrationEmail } from '../../users/registration-email.js';

export class ForgotPasswordDto {
  /** The account's address, matched as at login. @example "alice@example.com" */
  @RegistrationEmail()
  readonly email: string;
}
