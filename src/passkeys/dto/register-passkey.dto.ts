import { Type } from 'class-transformer';
import { IsObject, IsOptional, ValidateNested } from 'class-validator';
import { PasskeyName } from './passkey-name.js';
import { RegistrationResponseDto } from './registration-response.dto.js';

export class RegisterPasskeyDto {
  /** The browser's answer to the creation options: `credential.toJSON()`. */
  @IsObject()
  @ValidateNested()
  @Type(() => RegistrationResponseDto)
  readonly response: RegistrationResponseDto;

  /** What the list shows; `Llave de acceso` when absent. @example "Portátil del trabajo" */
  @IsOptional()
  @PasskeyName()
  readonly name?: string | null;
}
