import { Transform } from 'class-transformer';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * JavaScript's white space but U+FEFF, which trim() would drop silently: it is invisible, and
 * HasNoInvisibleCharacters refuses it wherever it stands.
 */
const SPACE = '[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const EDGE_SPACES = new RegExp(`^${SPACE}+|${SPACE}+$`, 'g');

/** Trims strings before validation; other types pass through so that @IsString reports them. */
export const Trim = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.replace(EDGE_SPACES, '') : value,
  );

/**
 * Code points no one can see or that change the direction of what follows: the Unicode
 * Default_Ignorable_Code_Point set (U+200B zero width space, U+2060 word joiner, U+FEFF, the
 * soft hyphen, variation selectors, …), which holds every bidirectional control (U+061C, U+200E,
 * U+200F, U+202A–U+202E, U+2066–U+2069). Two strings that differ only by them look the same.
 */
export const INVISIBLE_CHARACTERS = /\p{Default_Ignorable_Code_Point}/u;

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

/**
 * Refuses invisible and direction-changing characters (see INVISIBLE_CHARACTERS): in an
 * identity they make two strings that look the same. A value that is not a string is left to
 * @IsString.
 */
export function HasNoInvisibleCharacters(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'hasNoInvisibleCharacters',
      validator: {
        validate: (value: unknown) =>
          typeof value !== 'string' || !INVISIBLE_CHARACTERS.test(value),
        defaultMessage: () =>
          '$property must not contain invisible or direction-changing characters',
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
