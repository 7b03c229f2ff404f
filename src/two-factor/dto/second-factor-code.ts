import { applyDecorators } from '@nestjs/common';
import { IsNotEmpty, IsString } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';

/** Longer than any TOTP or recovery code written with spaces and hyphens. */
export const SECOND_FACTOR_CODE_MAX_LENGTH = 32;

/** A second-factor code (a TOTP or a recovery code), bounded as at login. */
export function SecondFactorCode(): PropertyDecorator {
  return applyDecorators(IsString(), IsNotEmpty(), MaxChars(SECOND_FACTOR_CODE_MAX_LENGTH));
}
