import { IsNotEmpty, IsOptional, IsString } from 'class-validator';
import { HasNoControlCharacters, MaxChars } from '../../common/validation/string-rules.js';
import { REVOKE_REASON_MAX_LENGTH } from '../entities/refresh-token.entity.js';
import { REFRESH_TOKEN_MAX_LENGTH } from './refresh.dto.js';

export class RevokeDto {
  /** The refresh token to revoke; it must belong to the bearer. */
  @IsString()
  @IsNotEmpty()
  @MaxChars(REFRESH_TOKEN_MAX_LENGTH)
  readonly refreshToken: string;

  /** Stored as the revocation reason. Defaults to `Revoked by user`. */
  @IsOptional()
  @IsString()
  @MaxChars(REVOKE_REASON_MAX_LENGTH)
  @HasNoControlCharacters()
  readonly reason?: string;
}
