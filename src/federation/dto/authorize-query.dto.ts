import { IsString, Matches } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';

/** The longest redirect URL accepted; the configured ones are compared exactly. */
export const REDIRECT_URL_MAX_LENGTH = 2048;
/** An S256 challenge: base64url of a SHA-256, 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Where a flow returns to, and the front end's PKCE challenge that binds its one-time code. */
export class AuthorizeQueryDto {
  /**
   * One of Federation__RedirectUrls, exactly: where the flow ends with `?code=` or `?error=`.
   * @example "https://app.example.com/signed-in"
   */
  @IsString()
  @MaxChars(REDIRECT_URL_MAX_LENGTH)
  readonly redirectTo: string;

  /**
   * BASE64URL(SHA-256(codeVerifier)) of a verifier the front end keeps for the token exchange.
   * @example "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
   */
  @IsString()
  @Matches(S256_CHALLENGE, {
    message: '$property must be an S256 code challenge (43 base64url characters)',
  })
  readonly codeChallenge: string;
}
