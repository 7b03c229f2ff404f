import { IsString } from 'class-validator';
import { IsAcceptablePassword } from '../password-policy.js';
import { ConfirmingPassword } from './password-confirmation.js';

export class ChangePasswordDto {
  /** The password in use, checked like a login's. @example "S3cure!pass" */
  @ConfirmingPassword()
  readonly currentPassword: string;

  /** Follows registration's rule, and differs from the current one. @example "N3w!secure" */
  @IsString()
  @IsAcceptablePassword()
  readonly newPassword: string;
}
