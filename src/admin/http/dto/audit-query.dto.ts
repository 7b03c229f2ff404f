import { Type } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, IsString, IsUUID, Matches, Max, Min } from 'class-validator';
import { MaxChars } from '../../../common/validation/string-rules.js';
import { MAX_PAGE_SIZE } from './list-users-query.dto.js';

/** Event types are snake_case words (`login_failed`, `admin_user_deactivated`). */
const EVENT_TYPE = /^[a-z][a-z_]{0,39}$/;

/** The filters of the audit listing and of its JSON Lines export. */
export class AuditFilterDto {
  /** One account's events. */
  @IsOptional()
  @IsUUID()
  readonly userId?: string;

  /** One type of event, e.g. `login_failed`. */
  @IsOptional()
  @IsString()
  @Matches(EVENT_TYPE)
  readonly type?: string;

  /** Events at or after this instant (ISO 8601 with its zone). */
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  readonly from?: string;

  /** Events before this instant (ISO 8601 with its zone). */
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  readonly to?: string;
}

/** `GET /api/admin/audit`. */
export class AuditQueryDto extends AuditFilterDto {
  /** `nextCursor` of the previous page. */
  @IsOptional()
  @IsString()
  @MaxChars(64)
  readonly cursor?: string;

  /** Page size, 1 to 100; 50 when absent. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  readonly limit?: number;
}
