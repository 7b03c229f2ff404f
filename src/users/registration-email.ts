import { applyDecorators } from '@nestjs/common';
import { IsString } from 'class-validator';
import {
  HasNoControlCharacters,
  HasNoInvisibleCharacters,
  MaxChars,
  Trim,
} from '../common/validation/string-rules.js';
import { IsAcceptableEmail } from './acceptable-email.js';
import { EMAIL_MAX_LENGTH } from './entities/user.entity.js';

/**
 * What an address must be to belong to an account: registration's rule, used wherever an address
 * is given that could become or name an account (a new address, a password reset).
 */
export function RegistrationEmail(): PropertyDecorator {
  return applyDecorators(
    Trim(),
    IsString(),
    IsAcceptableEmail(),
    MaxChars(EMAIL_MAX_LENGTH),
    HasNoControlCharacters(),
    HasNoInvisibleCharacters(),
  );
}
