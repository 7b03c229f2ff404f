import { applyDecorators } from '@nestjs/common';
import { IsNotEmpty, IsString } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';

/** Bounds the work a login can ask for; no registered password is this long. */
export const LOGIN_PASSWORD_MAX_LENGTH = 1024;

/** The account's password, asked again before a change; bounded as at login. */
export function ConfirmingPassword(): PropertyDecorator {
  return applyDecorators(IsString(), IsNotEmpty(), MaxChars(LOGIN_PASSWORD_MAX_LENGTH));
}
