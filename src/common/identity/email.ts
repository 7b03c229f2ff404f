import { toASCII } from 'tr46';
import { INVISIBLE_CHARACTERS } from '../validation/string-rules.js';

const INVISIBLE_CHARACTERS_ALL = new RegExp(INVISIBLE_CHARACTERS.source, 'gu');

/** Code points Unicode has not assigned yet: their normalisation may change in a later version. */
export const UNASSIGNED_CHARACTERS = /\p{General_Category=Unassigned}/u;

/** U+0131 ı: case folding keeps it apart from `i`; upper-casing would merge them. */
const DOTLESS_I = 'ı';

/**
 * The canonical form of an e-mail address: how it is stored, and how a login, the admin CLI and
 * the migration of existing rows find it. Addresses a person cannot tell apart have one form:
 *
 * 1. Invisible characters are dropped (the API refuses them before this point; the migration of
 *    older rows relies on it), then spaces at either end.
 * 2. The address splits at its last `@` into the local part and the domain.
 * 3. The local part takes its NFKC form (canonical and compatibility equivalents: NFD and NFC,
 *    fullwidth letters, ligatures, the Kelvin sign are one), then each character its full case
 *    folding (`Straße` and `STRASSE`, final and medial sigma, `İ`, but `ı` stays apart from
 *    `i`), then NFKC again, until nothing changes.
 * 4. The domain is converted by UTS #46 (IDNA2008 nontransitional processing) to its ASCII
 *    form: lower case, the same width and compatibility mappings, and a Unicode domain and its
 *    `xn--` form are one (`straße.de` stays apart from `strasse.de`: they are two domains). A
 *    domain UTS #46 refuses is kept as it is, so the function never fails; registration refuses
 *    such an address (see canonicalDomainOf). UTS #46 is tr46's (the URL standard's
 *    implementation, with its own Unicode tables), not `node:url`'s, whose answers change with
 *    the Node.js release: Node.js 26 passes `xn--zz` through where Node.js 20 refused it.
 *
 * Applied to its own result it changes nothing (a fixed point), so the address the API returns
 * always logs in.
 */
export function normalizeEmail(email: string): string {
  const trimmed = email.replace(INVISIBLE_CHARACTERS_ALL, '').trim();
  const at = trimmed.lastIndexOf('@');
  if (at === -1) {
    return foldIdentifier(trimmed);
  }
  const domain = trimmed.slice(at + 1);
  return `${foldIdentifier(trimmed.slice(0, at))}@${canonicalDomain(domain) ?? domain}`;
}

/** The domain of an address in the ASCII form UTS #46 gives it, or null if it refuses it. */
export function canonicalDomainOf(email: string): string | null {
  const at = email.lastIndexOf('@');
  return at === -1 ? null : canonicalDomain(email.slice(at + 1));
}

/**
 * UTS #46 with the options of the URL standard's "domain to ASCII" (not strict): nontransitional,
 * CheckBidi and CheckJoiners on, CheckHyphens, UseSTD3ASCIIRules and VerifyDnsLength off. An
 * `xn--` label must decode as Punycode to a label UTS #46 accepts, with a non-ASCII character.
 */
const URL_STANDARD_UTS46 = {
  checkBidi: true,
  checkHyphens: false,
  checkJoiners: true,
  ignoreInvalidPunycode: false,
  transitionalProcessing: false,
  useSTD3ASCIIRules: false,
  verifyDNSLength: false,
} as const;

/**
 * The URL standard's forbidden domain code points (controls, space and `#%/:<>?@[\]^|`): what its
 * host parser refuses after UTS #46, as `node:url` did. The output of toASCII is ASCII.
 */
const FORBIDDEN_DOMAIN_CODE_POINT = /[\p{Cc} #%/:<>?@[\\\]^|]/u;

/** A label that starts with `xn--`, in any case. */
const XN_LABEL = /(?:^|\.)xn--/iu;

/** The ASCII form of a domain, or null if UTS #46 refuses it or it has a forbidden code point. */
function domainToAscii(domain: string): string | null {
  const ascii = isPlainAscii(domain) ? domain.toLowerCase() : toASCII(domain, URL_STANDARD_UTS46);
  return ascii === null || FORBIDDEN_DOMAIN_CODE_POINT.test(ascii) ? null : ascii;
}

/** The URL standard's shortcut: ASCII with no label that starts with `xn--` (any case). */
function isPlainAscii(domain: string): boolean {
  return /^\p{ASCII}*$/u.test(domain) && !XN_LABEL.test(domain);
}

/** UTS #46 ToASCII, when it accepts the domain and would give the same again for its result. */
function canonicalDomain(domain: string): string | null {
  const ascii = domainToAscii(domain);
  if (ascii === null || ascii === domain) {
    return ascii;
  }
  return domainToAscii(ascii) === ascii ? ascii : null;
}

/** Enough for every code point (see email.spec.ts); a bound all the same. */
const MAX_FOLD_ROUNDS = 4;

/**
 * NFKC, then full case folding per character, then NFKC, without invisible characters or spaces
 * at the ends (NFKC turns some accents into a space and a combining mark), until it stops
 * changing.
 */
function foldIdentifier(text: string): string {
  let current = text;
  for (let round = 0; round < MAX_FOLD_ROUNDS; round += 1) {
    let folded = '';
    for (const char of current.normalize('NFKC')) {
      folded += char === DOTLESS_I ? char : char.toUpperCase().toLowerCase();
    }
    const next = folded.normalize('NFKC').replace(INVISIBLE_CHARACTERS_ALL, '').trim();
    if (next === current) {
      return next;
    }
    current = next;
  }
  return current;
}
