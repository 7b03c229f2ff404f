import { Type } from 'class-transformer';
import { IsObject, ValidateNested } from 'class-validator';
import { AuthenticationResponseDto } from './authentication-response.dto.js';

export class PasskeyLoginDto {
  /**
   * The browser's answer to the request options of POST /api/auth/passkeys/login/options:
   * `credential.toJSON()`.
   */
  @IsObject()
  @ValidateNested()
  @Type(() => AuthenticationResponseDto)
  readonly response: AuthenticationResponseDto;
}
