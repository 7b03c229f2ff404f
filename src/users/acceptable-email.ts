import { isEmail, ValidateBy, type ValidationOptions } from 'class-validator';
import { codePointLength } from '../common/validation/string-rules.js';
import { EMAIL_MAX_LENGTH } from './entities/user.entity.js';
import {
  canonicalDomainOf,
  normalizeEmail,
  UNASSIGNED_CHARACTERS,
} from '../common/identity/email.js';

/**
 * An address a new account may have: well-formed as typed (after NFKC, so fullwidth forms
 * count as what they stand for) and in its canonical form (see normalizeEmail), with a domain
 * UTS #46 accepts, no code point Unicode has not assigned (its normalisation could change under
 * a later Unicode version, and the stored form would stop being canonical), and a canonical form
 * of at most EMAIL_MAX_LENGTH characters. The message is class-validator's own for @IsEmail.
 */
export function isAcceptableEmail(value: string): boolean {
  if (UNASSIGNED_CHARACTERS.test(value) || !isEmail(value.normalize('NFKC'))) {
    return false;
  }
  const canonical = normalizeEmail(value);
  return (
    isEmail(canonical) &&
    canonicalDomainOf(canonical) !== null &&
    codePointLength(canonical) <= EMAIL_MAX_LENGTH
  );
}

/** A value that is not a string is left to @IsString. */
export function IsAcceptableEmail(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isAcceptableEmail',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || isAcceptableEmail(value),
        defaultMessage: () => '$property must be an email',
      },
    },
    options,
  );
}
