import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, Matches, ValidateNested } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';
import { AuthenticationResponseDto } from '../../passkeys/dto/authentication-response.dto.js';
import { SecondFactorCode } from '../../two-factor/dto/second-factor-code.js';

/** The one-time code the callback handed to the front end, and the verifier of its challenge. */
export class FederationTokenDto {
  /**
   * The `code` the flow's redirect carried.
   * @example "da5QhKGKeXtWwsM_-0z9IkOyTzan4qcbBizLmr-2RMw"
   */
  @IsString()
  @MaxChars(128)
  readonly code: string;

  /**
   * The PKCE verifier (RFC 7636: 43 to 128 unreserved characters) whose S256 challenge started the flow.
   * @example "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
   */
  @IsString()
  @Matches(/^[A-Za-z0-9._~-]{43,128}$/, { message: '$property must be a PKCE code verifier' })
  readonly codeVerifier: string;

  /**
   * For an account with a second factor: the six digits of its authenticator app, or one of its
   * recovery codes (what login takes as `code`). Ignored for other accounts.
   * @example "123456"
   */
  @IsOptional()
  @SecondFactorCode()
  readonly secondFactorCode?: string | null;

  /**
   * When passkeys are configured, in place of `secondFactorCode`: an assertion of one of the
   * account's passkeys (`credential.toJSON()`, made with the challenge of POST
   * /api/auth/passkeys/login/options), as login takes it. Used instead of `secondFactorCode`
   * when both are sent; ignored for accounts without a second factor, and when passkeys are off.
   */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => AuthenticationResponseDto)
  readonly passkey?: AuthenticationResponseDto | null;
}
