import { Type } from 'class-transformer';
import { IsNotEmpty, IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import {
  HasNoControlCharacters,
  HasNoInvisibleCharacters,
  MaxChars,
} from '../../common/validation/string-rules.js';
import { LOGIN_PASSWORD_MAX_LENGTH } from '../../passwords/dto/password-confirmation.js';
import { SECOND_FACTOR_CODE_MAX_LENGTH } from '../../two-factor/dto/second-factor-code.js';
import { EMAIL_MAX_LENGTH } from '../../users/entities/user.entity.js';
import { AuthenticationResponseDto } from '../../passkeys/dto/authentication-response.dto.js';

export class LoginDto {
  /** Matched in its canonical form, as registration stores it. @example "alice@example.com" */
  @IsString()
  @IsNotEmpty()
  @MaxChars(EMAIL_MAX_LENGTH + 64)
  @HasNoControlCharacters()
  @HasNoInvisibleCharacters()
  readonly email: string;

  /** @example "S3cure!pass" */
  @IsString()
  @IsNotEmpty()
  @MaxChars(LOGIN_PASSWORD_MAX_LENGTH)
  readonly password: string;

  /**
   * Beyond the interface: the second factor's code, for an account that turned it on: the six
   * digits of its authenticator app, or one of its recovery codes. Ignored for other accounts;
   * null is no code, as for every optional field.
   * @example "123456"
   */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxChars(SECOND_FACTOR_CODE_MAX_LENGTH)
  readonly code?: string | null;

  /**
   * Beyond the interface, when passkeys are configured: in place of `code`, an assertion of one
   * of the account's passkeys (`credential.toJSON()`, made with the challenge of POST
   * /api/auth/passkeys/login/options). Used instead of `code` when both are sent; ignored for
   * accounts without a second factor, and when passkeys are off.
   */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => AuthenticationResponseDto)
  readonly passkey?: AuthenticationResponseDto | null;
}
