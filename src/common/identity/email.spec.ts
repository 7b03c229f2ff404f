import { normalizeEmail } from './email.js';

/** Every code point but the surrogates, which the API refuses before this point. */
function* codePoints(): Generator<string> {
  for (let code = 0; code <= 0x10ffff; code += 1) {
    if (code < 0xd800 || code > 0xdfff) {
      yield String.fromCodePoint(code);
    }
  }
}

describe(normalizeEmail.name, () => {
  it('should be a fixed point for every code point, in the local part and in the domain', () => {
    const notFixed: string[] = [];
    for (const char of codePoints()) {
      for (const email of [`x${char}y@example.com`, `u@ex${char}ample.com`, `${char}@${char}.de`]) {
        const once = normalizeEmail(email);
        if (normalizeEmail(once) !== once) {
          notFixed.push(email);
        }
      }
    }

    expect(notFixed).toEqual([]);
    // Three addresses for each of 1.1 million code points: seconds, more on a busy machine.
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
