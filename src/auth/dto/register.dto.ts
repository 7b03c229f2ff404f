import { IsNotEmpty, IsString } from 'class-validator';
import {
  HasNoControlCharacters,
  HasNoInvisibleCharacters,
  MaxChars,
  Trim,
} from '../../common/validation/string-rules.js';
import { USERNAME_MAX_LENGTH } from '../../users/entities/user.entity.js';
import { IsAcceptablePassword } from '../../passwords/password-policy.js';
import { RegistrationEmail } from '../../users/registration-email.js';

export class RegisterDto {
  /** Display name; trimmed. @example "alice" */
  @Trim()
  @IsString()
  @IsNotEmpty()
  @MaxChars(USERNAME_MAX_LENGTH)
  @HasNoControlCharacters()
  @HasNoInvisibleCharacters()
  readonly username: string;

  /**
   * Login identifier; stored in its canonical form (lower case, NFKC, the domain in ASCII), which
   * is what the responses show. @example "alice@example.com"
   */
  @RegistrationEmail()
  readonly email: string;

  /**
   * At least 8 and at most 128 characters, with an uppercase letter, a lowercase letter, a digit
   * and a special character. Never trimmed. @example "S3cure!pass"
   */
  @IsString()
  @IsAcceptablePassword()
  readonly password: string;
}
