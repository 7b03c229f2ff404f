import { IsNotEmpty, IsString } from 'class-validator';
import {
  HasNoControlCharacters,
  HasNoInvisibleCharacters,
  MaxChars,
} from '../../common/validation/string-rules.js';
import { EMAIL_MAX_LENGTH } from '../../users/entities/user.entity.js';

/** Bounds the work a login can ask for; no registered password is this long. */
export const LOGIN_PASSWORD_MAX_LENGTH = 1024;

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
}
