/** Deepest nesting of objects and arrays a request body may have; every valid body has 1. */
export const MAX_BODY_DEPTH = 32;

/** Why a JSON text that parsed is still refused. */
export type JsonShapeProblem = 'tooDeep' | 'duplicateKey' | 'loneSurrogate';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/**
 * What JSON.parse accepts but this service refuses (RFC 7493, I-JSON): nesting deeper than
 * MAX_BODY_DEPTH, an object naming one key twice (a proxy and the service could each read a
 * different value), and a string that escapes a lone UTF-16 surrogate (it has no UTF-8 form,
 * so storing it would silently turn it into U+FFFD). `text` must be JSON that parses: one pass,
 * no recursion, so any nesting costs the same stack.
 */
export function jsonShapeProblem(text: string): JsonShapeProblem | null {
  /** One entry per open object or array: the keys seen so far, or null for an array. */
  const open: (Set<string> | null)[] = [];
  let expectsKey = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = closingQuote(text, i);
      const raw = text.slice(i + 1, end);
      const value = raw.includes('\\') ? unescape(raw) : raw;
      if (!value.isWellFormed()) {
        return 'loneSurrogate';
      }
      const keys = open.at(-1);
      if (expectsKey && keys) {
        if (keys.has(value)) {
          return 'duplicateKey';
        }
        keys.add(value);
        expectsKey = false;
      }
      i = end;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (open.length === MAX_BODY_DEPTH) {
        return 'tooDeep';
      }
      open.push(code === OPEN_OBJECT ? new Set() : null);
      expectsKey = code === OPEN_OBJECT;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      open.pop();
    } else if (code === COMMA) {
      expectsKey = open.at(-1) instanceof Set;
    }
  }
  return null;
}

/** Index of the quote that ends the string opening at `start`. */
function closingQuote(text: string, start: number): number {
  let i = start + 1;
  while (text.charCodeAt(i) !== QUOTE) {
    i += text.charCodeAt(i) === BACKSLASH ? 2 : 1;
  }
  return i;
}

/** The value of a JSON string's contents; lone surrogates stay lone, as JSON.parse keeps them. */
function unescape(raw: string): string {
  let value = '';
  for (let i = 0; i < raw.length; i += 1) {
    const char = raw[i];
    if (char !== '\\') {
      value += char;
      continue;
    }
    const escape = raw[i + 1];
    if (escape === 'u') {
      value += String.fromCharCode(Number.parseInt(raw.slice(i + 2, i + 6), 16));
      i += 5;
    } else {
      value += ESCAPES[escape] ?? escape;
      i += 1;
    }
  }
  return value;
}
