import { IsBoolean, IsNotEmpty, IsOptional, IsString } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';
import { REFRESH_TOKEN_MAX_LENGTH } from '../../tokens/dto/refresh.dto.js';

export class RevokeAllSessionsDto {
  /** Keep the session of `refreshToken` and revoke every other. Defaults to false. @example true */
  @IsOptional()
  @IsBoolean()
  readonly keepCurrent?: boolean;

  /**
   * The client's current refresh token; required to keep its session, where it must be an
   * active token of the bearer. Ignored when `keepCurrent` is not true.
   * @example "kq3V0S2yq8m1bZcR5x0G6uUj4tQnH7wEoLdP9aFsYiM"
   */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxChars(REFRESH_TOKEN_MAX_LENGTH)
  readonly refreshToken?: string;
}
