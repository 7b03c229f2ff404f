import { Type } from 'class-transformer';
import { IsObject, IsOptional, ValidateNested } from 'class-validator';
import { ConfirmingPassword } from '../../passwords/dto/password-confirmation.js';
import { AuthenticationResponseDto } from './authentication-response.dto.js';

/** The recent proof that adding a passkey asks for: the password, or one of the account's passkeys. */
export class PasskeyRegistrationOptionsDto {
  /** The account's password, checked like a login's. @example "S3cure!pass" */
  @IsOptional()
  @ConfirmingPassword()
  readonly password?: string | null;

  /**
   * Instead of the password: an assertion of one of the account's passkeys, made with a
   * challenge of POST /api/auth/passkeys/login/options (`credential.toJSON()`).
   */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => AuthenticationResponseDto)
  readonly passkey?: AuthenticationResponseDto | null;
}
