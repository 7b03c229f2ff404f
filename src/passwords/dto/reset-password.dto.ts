import { IsString } from 'class-validator';
import { IsAcceptablePassword } from '../password-policy.js';
import { MailedToken } from '../../account-tokens/dto/mailed-token.js';

export class ResetPasswordDto {
  /**
   * The token of the reset link: 43 base64url characters.
   * @example "da5QhKGKeXtWwsM_-0z9IkOyTzan4qcbBizLmr-2RMw"
   */
  @MailedToken()
  readonly token: string;

  /** Follows registration's rule. @example "N3w!secure" */
  @IsString()
  @IsAcceptablePassword()
  readonly newPassword: string;
}
