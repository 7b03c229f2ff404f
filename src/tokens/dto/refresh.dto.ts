import { IsNotEmpty, IsString } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';
import { AcceptsValidBodies } from '../../common/validation/validation.pipe.js';

/** Raw refresh tokens are 43 characters; anything far longer cannot be one. */
export const REFRESH_TOKEN_MAX_LENGTH = 512;

/**
 * Every refresh's body, so the valid ones skip class-validator. At most 512 UTF-16 units is at
 * most 512 code points; a longer string, or anything else, takes the full path.
 */
@AcceptsValidBodies<RefreshDto>(({ refreshToken }) =>
  typeof refreshToken === 'string' &&
  refreshToken.length > 0 &&
  refreshToken.length <= REFRESH_TOKEN_MAX_LENGTH
    ? Object.assign(new RefreshDto(), { refreshToken })
    : undefined,
)
export class RefreshDto {
  /** The refresh token from the last auth response. */
  @IsString()
  @IsNotEmpty()
  @MaxChars(REFRESH_TOKEN_MAX_LENGTH)
  readonly refreshToken: string;
}
