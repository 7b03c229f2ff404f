import {
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  ValidateBy,
  ValidateIf,
  type ValidationArguments,
} from 'class-validator';
import { MailedToken } from '../../account-tokens/dto/mailed-token.js';
import { SecondFactorCode } from '../../two-factor/dto/second-factor-code.js';
import {
  HasNoControlCharacters,
  HasNoInvisibleCharacters,
  MaxChars,
  Trim,
} from '../../common/validation/string-rules.js';
import { EMAIL_MAX_LENGTH } from '../../users/entities/user.entity.js';

/** Longer than any code EmailCode__CodeLength allows; a longer value cannot be one. */
export const EMAIL_CODE_MAX_DIGITS = 16;

/** Absent: undefined or null, as for every optional field. */
function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

/** Refuses `token` beside `email` or `code`: a body says one way of signing in, not two. */
function IsTheOnlyCredential(): PropertyDecorator {
  return ValidateBy({
    name: 'isTheOnlyCredential',
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) => {
        const body = (args?.object ?? {}) as Partial<EmailCodeLoginDto>;
        return isAbsent(body.email) && isAbsent(body.code);
      },
      defaultMessage: () => '$property cannot be sent with email or code',
    },
  });
}

/**
 * Either `email` and the mailed `code`, or the link's `token` alone; `secondFactorCode` as well
 * for an account with a second factor.
 */
export class EmailCodeLoginDto {
  /**
   * The address the code was mailed to, matched as at login. Required with `code`.
   * @example "alice@example.com"
   */
  @ValidateIf((body: EmailCodeLoginDto) => isAbsent(body.token) || !isAbsent(body.email))
  @IsString()
  @IsNotEmpty()
  @MaxChars(EMAIL_MAX_LENGTH + 64)
  @HasNoControlCharacters()
  @HasNoInvisibleCharacters()
  readonly email?: string | null;

  /**
   * The code of the mail, its digits only (spaces around it are ignored). Required with `email`.
   * @example "042917"
   */
  @ValidateIf((body: EmailCodeLoginDto) => isAbsent(body.token) || !isAbsent(body.code))
  @Trim()
  @IsString()
  @Matches(/^[0-9]+$/, { message: '$property must be digits only' })
  @MaxChars(EMAIL_CODE_MAX_DIGITS)
  readonly code?: string | null;

  /**
   * Instead of `email` and `code`: the token of the mail's link, as the front end's page read it
   * from the link.
   * @example "da5QhKGKeXtWwsM_-0z9IkOyTzan4qcbBizLmr-2RMw"
   */
  @IsOptional()
  @MailedToken()
  @IsTheOnlyCredential()
  readonly token?: string | null;

  /**
   * For an account with a second factor: the six digits of its authenticator app, or one of its
   * recovery codes (what login takes as `code`). Ignored for other accounts.
   * @example "123456"
   */
  @IsOptional()
  @SecondFactorCode()
  readonly secondFactorCode?: string | null;
}
