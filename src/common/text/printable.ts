/**
 * A value someone else chose (a client's user agent, a provider's subject) shown in an
 * operator's terminal: anything but plain printable text is shown JSON-quoted, so no escape
 * sequence or line break gets through.
 */
export function printable(value: string): string {
  return /^[\x21-\x7e]*$/.test(value) && value !== '' ? value : JSON.stringify(value);
}
