import { IsNotEmpty, IsString } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';

/** Raw refresh tokens are 43 characters; anything far longer cannot be one. */
export const REFRESH_TOKEN_MAX_LENGTH = 512;

export class RefreshDto {
  /** The refresh token from the last auth response. */
  @IsString()
  @IsNotEmpty()
  @MaxChars(REFRESH_TOKEN_MAX_LENGTH)
  readonly refreshToken: string;
}
