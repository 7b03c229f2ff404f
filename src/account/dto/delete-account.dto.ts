import { ConfirmingPassword } from '../../passwords/dto/password-confirmation.js';

export class DeleteAccountDto {
  /** The account's password, checked like a login's. @example "S3cure!pass" */
  @ConfirmingPassword()
  readonly password: string;
}
