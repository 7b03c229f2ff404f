import { applyDecorators } from '@nestjs/common';
import { IsNotEmpty, IsString } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';
import { LOGIN_PASSWORD_MAX_LENGTH } from '../../auth/dto/login.dto.js';

/** The account's password, asked again before a change; bounded as at login. */
export function ConfirmingPassword(): PropertyDecorator {
  return applyDecorators(IsString(), IsNotEmpty(), MaxChars(LOGIN_PASSWORD_MAX_LENGTH));
}
