import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { ACCOUNT_STATES, type AccountStateFilter } from '../../admin.service.js';
import {
  HasNoControlCharacters,
  HasNoInvisibleCharacters,
  MaxChars,
} from '../../../common/validation/string-rules.js';
import { EMAIL_MAX_LENGTH } from '../../../users/entities/user.entity.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/** A cursor is the base64url of an id or an e-mail. */
export const CURSOR_MAX_LENGTH = 400;

/** `GET /api/admin/users`: every filter is optional and they combine. */
export class ListUsersQueryDto {
  /** An exact e-mail, matched as login matches it (trimmed, lower case). */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxChars(EMAIL_MAX_LENGTH)
  @HasNoControlCharacters()
  @HasNoInvisibleCharacters()
  readonly email?: string;

  /** The start of the e-mail (lower case); the listing is then ordered by e-mail. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  // The range's upper bound moves the last character up one: U+FFFF has no successor.
  @Matches(/^[^\uffff]*$/)
  @MaxChars(EMAIL_MAX_LENGTH)
  @HasNoControlCharacters()
  @HasNoInvisibleCharacters()
  readonly emailPrefix?: string;

  /**
   * `active`, `deactivated`, `locked` (a lockout not yet over), `unverified` (e-mail never
   * verified) or `mfa` (a confirmed second factor).
   */
  @IsOptional()
  @IsIn(ACCOUNT_STATES)
  readonly state?: AccountStateFilter;

  /** `nextCursor` of the previous page. */
  @IsOptional()
  @IsString()
  @MaxChars(CURSOR_MAX_LENGTH)
  readonly cursor?: string;

  /** Page size, 1 to 100; 50 when absent. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  readonly limit?: number;
}
