import { originMatcher, parseAllowedOrigins } from './allowed-origins.js';

describe(parseAllowedOrigins.name, () => {
  const sut = parseAllowedOrigins;

  it.each([
    ['https://app.example.com', 'https://app.example.com'],
    ['https://app.example.com/', 'https://app.example.com'],
    ['HTTPS://App.Example.COM', 'https://app.example.com'],
    ['https://app.example.com:443', 'https://app.example.com'],
    ['http://app.example.com:80', 'http://app.example.com'],
    ['https://app.example.com:8443', 'https://app.example.com:8443'],
    ['http://localhost:5173', 'http://localhost:5173'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
  ])('should read %s as the origin browsers send, %s', (entry, origin) => {
    for (const isDevelopment of [false, true]) {
      expect(sut([entry], isDevelopment)).toEqual({
        origins: { exact: [origin], anyPortOf: [], any: false },
        problems: [],
        warnings: [],
      });
    }
  });

  it.each([
    'app.example.com',
    'ftp://app.example.com',
    'https://app.example.com/app',
    'https://app.example.com/./',
    'https://app.example.com?x=1',
    'https://app.example.com#top',
    'https://user:pw@app.example.com',
    'https://*.example.com',
    'null',
    'file:///tmp/page.html',
    'https://',
  ])('should refuse %s as not an origin, in every mode', (entry) => {
    for (const isDevelopment of [false, true]) {
      expect(sut([entry], isDevelopment).problems).toEqual([
        `Cors__AllowedOrigins: "${entry}" is not an origin (http or https, a host and an optional port, without path, query, fragment, credentials or wildcards)`,
      ]);
    }
  });

  it('should refuse "*" in production and allow it in development with a warning', () => {
    expect(sut(['*'], false)).toEqual({
      origins: { exact: [], anyPortOf: [], any: false },
      problems: [
        `Cors__AllowedOrigins: "*" would let a page on any origin drive registration and login from a visitor's browser, so it is refused in production; list the exact origins of your front ends`,
      ],
      warnings: [],
    });
    expect(sut(['*'], true)).toEqual({
      origins: { exact: [], anyPortOf: [], any: true },
      problems: [],
      warnings: [
        'Cors__AllowedOrigins is "*": every origin may call the API from a browser, which is refused in production.',
      ],
    });
  });

  it.each(['http://localhost:*', 'https://127.0.0.1:*', 'http://[::1]:*/', 'HTTP://LocalHost:*'])(
    'should allow the loopback port wildcard %s in development only',
    (entry) => {
      expect(sut([entry], true).problems).toEqual([]);
      expect(sut([entry], true).origins.anyPortOf).toHaveLength(1);
      expect(sut([entry], false).problems).toEqual([
        `Cors__AllowedOrigins: "${entry}" has a port wildcard, which is refused in production; list the exact origins of your front ends`,
      ]);
    },
  );

  it('should refuse a port wildcard on another host, even in development', () => {
    expect(sut(['https://app.example.com:*'], true).problems).toEqual([
      'Cors__AllowedOrigins: "https://app.example.com:*" has a port wildcard on a host other than localhost, 127.0.0.1 or [::1]',
    ]);
  });

  it('should keep each origin once', () => {
    expect(
      sut(['https://a.example', 'https://A.example/', 'https://a.example:443'], false).origins,
    ).toEqual({ exact: ['https://a.example'], anyPortOf: [], any: false });
  });
});

describe(originMatcher.name, () => {
  it('should match exact origins only, as browsers write them', () => {
    const sut = originMatcher(parseAllowedOrigins(['https://app.example.com'], false).origins);

    expect(sut('https://app.example.com')).toBe(true);
    for (const other of [
      'https://app.example.com.evil.test',
      'https://evil-app.example.com',
      'http://app.example.com',
      'https://app.example.com:8443',
      'https://APP.example.com',
      'https://app.example.com/',
      'null',
      '',
    ]) {
      expect({ other, allowed: sut(other) }).toEqual({ other, allowed: false });
    }
  });

  it('should match a loopback host on any port, and nothing else, for a port wildcard', () => {
    const sut = originMatcher(parseAllowedOrigins(['http://localhost:*'], true).origins);

    for (const allowed of ['http://localhost', 'http://localhost:5173', 'http://localhost:1']) {
      expect({ allowed, result: sut(allowed) }).toEqual({ allowed, result: true });
    }
    for (const other of [
      'https://localhost:5173',
      'http://localhost.evil.test',
      'http://localhost:5173.evil.test',
      'http://localhost:',
      'http://localhost:123456',
      'http://127.0.0.1:5173',
    ]) {
      expect({ other, result: sut(other) }).toEqual({ other, result: false });
    }
  });

  it('should match every origin for "*" in development', () => {
    const sut = originMatcher(parseAllowedOrigins(['*'], true).origins);

    expect(sut('https://anything.test')).toBe(true);
  });
});
