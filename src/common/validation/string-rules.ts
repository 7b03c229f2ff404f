import { Transform } from 'class-transformer';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/** Trims strings before validation; other types pass through so that @IsString reports them. */
export const Trim = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));

/** C0/C1 controls, line and paragraph separators, and bidirectional overrides. */
const CONTROL_CHARACTERS = /[\p{Cc}\p{Zl}\p{Zp}\u202A-\u202E\u2066-\u2069]/u;

/** A value that is not a string is left to @IsString. */
export function HasNoControlCharacters(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'hasNoControlCharacters',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !CONTROL_CHARACTERS.test(value),
        defaultMessage: () => '$property must not contain control characters',
      },
    },
    options,
  );
}

/** Length in Unicode code points, so an emoji counts as one character, not two. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) {
    count += 1;
  }
  return count;
}

/** At most `max` code points; a value that is not a string is left to @IsString. */
export function MaxChars(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxChars',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || codePointLength(value) <= max,
        defaultMessage: () => `$property must be at most ${max} characters long`,
      },
    },
    options,
  );
}
