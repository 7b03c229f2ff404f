import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsString } from 'class-validator';
import { MaxChars, Trim } from '../../common/validation/string-rules.js';
import { EMAIL_MAX_LENGTH } from '../../users/entities/user.entity.js';

/**
 * What an address must be to belong to an account: registration's rule, used wherever an address
 * is given that could become or name an account (a new address, a password reset).
 */
export function RegistrationEmail(): PropertyDecorator {
  return applyDecorators(
    // The Swagger plugin reads validators only where they are written; this one it cannot see.
    ApiProperty({ format: 'email' }),
    Trim(),
    IsString(),
    IsEmail(),
    MaxChars(EMAIL_MAX_LENGTH),
  );
}
