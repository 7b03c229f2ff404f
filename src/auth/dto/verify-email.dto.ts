import { MailedToken } from './mailed-token.js';

export class VerifyEmailDto {
  /** The token of the verification (or e-mail change) link. */
  @MailedToken()
  readonly token: string;
}
