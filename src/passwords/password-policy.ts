import { ValidateBy } from 'class-validator';
import { codePointLength } from '../common/validation/string-rules.js';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;

interface PasswordRule {
  readonly name: string;
  readonly test: (password: string) => boolean;
  readonly message: string;
}

/** Spec §4.1, lengths counted in code points. Each broken rule is reported on its own. */
export const PASSWORD_RULES: readonly PasswordRule[] = [
  {
    name: 'passwordMinLength',
    test: (p) => codePointLength(p) >= PASSWORD_MIN_LENGTH,
    message: `password must be at least ${PASSWORD_MIN_LENGTH} characters long`,
  },
  {
    name: 'passwordMaxLength',
    test: (p) => codePointLength(p) <= PASSWORD_MAX_LENGTH,
    message: `password must be at most ${PASSWORD_MAX_LENGTH} characters long`,
  },
  {
    name: 'passwordUppercase',
    test: (p) => /\p{Lu}/u.test(p),
    message: 'password must contain an uppercase letter',
  },
  {
    name: 'passwordLowercase',
    test: (p) => /\p{Ll}/u.test(p),
    message: 'password must contain a lowercase letter',
  },
  {
    name: 'passwordDigit',
    test: (p) => /\p{Nd}/u.test(p),
    message: 'password must contain a digit',
  },
  {
    name: 'passwordSpecial',
    test: (p) => /[^\p{L}\p{N}]/u.test(p),
    message: 'password must contain a special character',
  },
];

/** Applies every rule of PASSWORD_RULES; a value that is not a string is left to @IsString. */
export function IsAcceptablePassword(): PropertyDecorator {
  return (target, propertyKey) => {
    for (const rule of PASSWORD_RULES) {
      ValidateBy({
        name: rule.name,
        validator: {
          validate: (value: unknown) => typeof value !== 'string' || rule.test(value),
          defaultMessage: () => rule.message,
        },
      })(target, propertyKey);
    }
  };
}
