import { canonicalDomainOf, normalizeEmail, UNASSIGNED_CHARACTERS } from './email.js';

/** Every code point but the surrogates, which the API refuses before this point. */
function* codePoints(): Generator<string> {
  for (let code = 0; code <= 0x10ffff; code += 1) {
    if (code < 0xd800 || code > 0xdfff) {
      yield String.fromCodePoint(code);
    }
  }
}

/**
 * Where UTS #46 treats thousands of code points alike: the unified ideographs and Hangul
 * syllables (valid, each its own Punycode), private use (disallowed).
 */
const ALIKE_BY_THE_THOUSAND = /[\p{Unified_Ideograph}\uAC00-\uD7A3\p{Co}]/u;

/**
 * The code points a domain is tried with: of those Unicode has assigned (the API refuses the
 * others), every 5th, and of those UTS #46 treats alike by the thousand, every 61st: about
 * 13,500 of the 297,000. A domain goes through tr46's tables in JavaScript, about 15 µs a
 * conversion in Node but some 17 times that under Jest's module runtime: every code point, twice,
 * in two domains, took over 13 minutes of a CI run, and the 51,000 assigned ones left after
 * thinning the ideographs took 46 s. The local part, folded without tr46, is still tried with
 * every one.
 */
function* domainCodePoints(): Generator<string> {
  let other = 0;
  let alike = 0;
  for (const char of codePoints()) {
    if (UNASSIGNED_CHARACTERS.test(char)) {
      continue;
    }
    const stride = ALIKE_BY_THE_THOUSAND.test(char) ? alike++ % 61 : other++ % 5;
    if (stride === 0) {
      yield char;
    }
  }
}

describe(normalizeEmail.name, () => {
  it('should be a fixed point for every code point in the local part', () => {
    const notFixed: string[] = [];
    for (const char of codePoints()) {
      // An ASCII domain takes the URL standard's shortcut: only the local part's folding runs.
      const once = normalizeEmail(`x${char}y@example.com`);
      if (normalizeEmail(once) !== once) {
        notFixed.push(once);
      }
    }

    expect(notFixed).toEqual([]);
  }, 60_000);

  it('should be a fixed point for assigned code points across Unicode in the domain', () => {
    const notFixed: string[] = [];
    for (const char of domainCodePoints()) {
      for (const email of [`u@ex${char}ample.com`, `${char}@${char}.de`]) {
        const once = normalizeEmail(email);
        if (normalizeEmail(once) !== once) {
          notFixed.push(email);
        }
      }
    }

    expect(notFixed).toEqual([]);
  }, 60_000);

  it.each([
    ['ASCII case', 'Alice@Example.COM', 'alice@example.com'],
    ['ß and SS', 'STRASSE@x.test', 'strasse@x.test'],
    ['ß', 'straße@x.test', 'strasse@x.test'],
    ['capital ẞ', 'STRAẞE@x.test', 'strasse@x.test'],
    ['final sigma', 'ΟΔΟΣ@x.test', 'οδοσ@x.test'],
    ['dotted capital I', 'İ@x.test', 'i̇@x.test'],
    ['NFD', 'jose\u0301@x.test', 'josé@x.test'],
    ['fullwidth forms', 'ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ', 'alice@example.com'],
    ['the Kelvin sign', '\u212Aate@x.test', 'kate@x.test'],
    ['a ligature', '\uFB01@x.test', 'fi@x.test'],
    ['a Unicode domain', 'jo@BÜCHER.de', 'jo@xn--bcher-kva.de'],
    ['an xn-- domain', 'jo@XN--BCHER-KVA.de', 'jo@xn--bcher-kva.de'],
    ['spaces around', '  alice@example.com\t', 'alice@example.com'],
    ['an invisible character (older rows)', 'ali\u200Bce@exam\u00ADple.com', 'alice@example.com'],
    ['a domain UTS #46 refuses, kept as it is', 'a@xn--zz.test', 'a@xn--zz.test'],
    ['a percent-encoded domain, kept as it is', 'a@ex%41mple.test', 'a@ex%41mple.test'],
  ])('should give %s its canonical form', (_case, email, canonical) => {
    expect(normalizeEmail(email)).toBe(canonical);
  });

  it.each([
    ['dotless ı and i', 'yıldız@x.test', 'yildiz@x.test'],
    ['ß and ss in a domain', 'a@straße.de', 'a@strasse.de'],
    ['é and e', 'rené@x.test', 'rene@x.test'],
  ])('should keep %s apart', (_case, one, other) => {
    expect(normalizeEmail(one)).not.toBe(normalizeEmail(other));
  });
});

/**
 * Domains and the ASCII form registration accepts them in, or null where it refuses them. The
 * same on every Node.js line: UTS #46 is tr46's, not node:url's (Node.js 20 refused `xn--zz`,
 * Node.js 26 passes it through).
 */
const DOMAINS: ReadonlyArray<readonly [string, string, string | null]> = [
  ['ASCII', 'example.com', 'example.com'],
  ['ASCII upper case', 'Example.COM', 'example.com'],
  ['a Unicode label', 'bücher.de', 'xn--bcher-kva.de'],
  ['its xn-- form', 'xn--bcher-kva.de', 'xn--bcher-kva.de'],
  ['its xn-- form in upper case', 'XN--BCHER-KVA.DE', 'xn--bcher-kva.de'],
  ['ß, nontransitional', 'straße.de', 'xn--strae-oqa.de'],
  ['Cyrillic in both labels', 'ПРИМЕР.рф', 'xn--e1afmkfd.xn--p1ai'],
  ['Japanese', '例え.テスト', 'xn--r8jz45g.xn--zckzah'],
  ['an xn-- top-level domain (中国)', 'mail.xn--fiqs8s', 'mail.xn--fiqs8s'],
  ['an xn-- Arabic label', 'xn--mgba3a4f16a.ir', 'xn--mgba3a4f16a.ir'],
  ['a Hebrew label beside an ASCII one', 'א.test', 'xn--4db.test'],
  ['fullwidth letters and dot', 'ｍａｉｌ．ｔｅｓｔ', 'mail.test'],
  ['an ideographic full stop', 'mail\u3002test', 'mail.test'],
  ['a ligature, mapped', '\uFB01.test', 'fi.test'],
  ['a soft hyphen, ignored', 'ex\u00ADample.test', 'example.test'],
  ['ZWNJ after a virama (ContextJ)', '\u0915\u094D\u200C\u0937.test', 'xn--11b2ezcs70k.test'],
  ['hyphens in the third and fourth place (CheckHyphens off)', 'ab--c.test', 'ab--c.test'],
  ['invalid Punycode: xn--zz', 'xn--zz.test', null],
  ['invalid Punycode in upper case', 'XN--ZZ.test', null],
  ['invalid Punycode as the top-level domain', 'xn--bcher-kva.xn--zz', null],
  ['invalid Punycode: a delimiter only', 'xn--ab--c.test', null],
  ['Punycode that overflows', 'xn--99999999.test', null],
  ['an empty xn-- label', 'xn--.test', null],
  ['Punycode of a control character (xn--a is U+0080)', 'xn--a.test', null],
  ['Punycode of an all-ASCII label', 'xn--abc-.test', null],
  ['a non-ASCII xn-- label', 'xn--bücher.de', null],
  ['a label that begins with a combining mark', '\u0301a.test', null],
  ['ZWJ without a virama (ContextJ)', '\u200Dx.test', null],
  ['ZWNJ without a virama or joining context', '\u0915\u200C.test', null],
  ['a right-to-left label that begins with a digit (Bidi rule)', '1\u0627.test', null],
  ['a disallowed code point (U+FFFD)', 'a\uFFFDb.test', null],
  ['a private-use code point', 'a\uE000.test', null],
  ['a space (a forbidden domain code point)', 'exa mple.test', null],
  ['a percent sign (percent-encoding is not decoded)', 'ex%41mple.test', null],
];

describe(canonicalDomainOf.name, () => {
  it.each(DOMAINS)('should give %s (%s) the ASCII form %p', (_case, domain, ascii) => {
    expect(canonicalDomainOf(`someone@${domain}`)).toBe(ascii);
  });

  it('should accept the ASCII form of every domain it accepts, and normalizeEmail give it', () => {
    for (const [, domain, ascii] of DOMAINS) {
      if (ascii !== null) {
        expect(canonicalDomainOf(`someone@${ascii}`)).toBe(ascii);
        // normalizeEmail drops invisible characters first (the API refuses them): ZWNJ goes.
        if (!/\u200C/u.test(domain)) {
          expect(normalizeEmail(`someone@${domain}`)).toBe(`someone@${ascii}`);
        }
      }
    }
  });

  it('should be null without an @', () => {
    expect(canonicalDomainOf('example.com')).toBeNull();
  });
});
