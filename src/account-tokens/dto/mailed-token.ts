import { applyDecorators } from '@nestjs/common';
import { IsNotEmpty, IsString } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';

/** Mailed tokens are 43 characters; anything far longer cannot be one. */
export const MAILED_TOKEN_MAX_LENGTH = 512;

/** The token of a mailed link, as the front end read it from the link. */
export function MailedToken(): PropertyDecorator {
  return applyDecorators(IsString(), IsNotEmpty(), MaxChars(MAILED_TOKEN_MAX_LENGTH));
}
