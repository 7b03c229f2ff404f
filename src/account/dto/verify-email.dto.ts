import { MailedToken } from '../../account-tokens/dto/mailed-token.js';

export class VerifyEmailDto {
  /**
   * The token of the verification (or e-mail change) link: 43 base64url characters.
   * @example "da5QhKGKeXtWwsM_-0z9IkOyTzan4qcbBizLmr-2RMw"
   */
  @MailedToken()
  readonly token: string;
}
