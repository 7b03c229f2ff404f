import { ConfirmingPassword } from '../../passwords/dto/password-confirmation.js';
import { RegistrationEmail } from '../../users/registration-email.js';

export class ChangeEmailDto {
  /** The account's password, checked like a login's. @example "S3cure!pass" */
  @ConfirmingPassword()
  readonly password: string;

  /** The new address: registration's rule; trimmed and stored in lower case. @example "alice@new.example.com" */
  @RegistrationEmail()
  readonly newEmail: string;
}
