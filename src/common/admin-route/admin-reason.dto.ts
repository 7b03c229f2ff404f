import { IsOptional, IsString } from 'class-validator';
import {
  HasNoControlCharacters,
  HasNoInvisibleCharacters,
  MaxChars,
  Trim,
} from '../validation/string-rules.js';

export const ADMIN_REASON_MAX_LENGTH = 500;

/** The body of every admin change: why, optionally; stored in the change's audit event. */
export class AdminReasonDto {
  /** Why the operator makes the change, for the audit trail; at most 500 characters. */
  @IsOptional()
  @Trim()
  @IsString()
  @MaxChars(ADMIN_REASON_MAX_LENGTH)
  @HasNoControlCharacters()
  @HasNoInvisibleCharacters()
  readonly reason?: string;
}
