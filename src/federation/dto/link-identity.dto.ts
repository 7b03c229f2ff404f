import { IsNotEmpty, IsString, Matches } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';
import { REDIRECT_URL_MAX_LENGTH, S256_CHALLENGE } from './authorize-query.dto.js';

/** Starts linking an identity to the signed-in account, with the proof of presence. */
export class LinkIdentityDto {
  /**
   * One of Federation__RedirectUrls, exactly: where the flow ends with `?linked=` or `?error=`.
   * @example "https://app.example.com/settings/identities"
   */
  @IsString()
  @MaxChars(REDIRECT_URL_MAX_LENGTH)
  readonly redirectTo: string;

  /**
   * The front end's S256 challenge, as for a sign-in.
   * @example "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
   */
  @IsString()
  @Matches(S256_CHALLENGE, {
    message: '$property must be an S256 code challenge (43 base64url characters)',
  })
  readonly codeChallenge: string;

  /** The account's current password: the proof of presence sensitive routes ask for. */
  @IsString()
  @IsNotEmpty()
  @MaxChars(1024)
  readonly password: string;
}
