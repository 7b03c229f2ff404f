import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import helmet from 'helmet';
import { headersOf, NO_CACHING } from './security-headers.js';

/** The headers helmet writes on a real Node response, names lower-case. */
function helmetOnRealResponse(middleware: ReturnType<typeof helmet>): Record<string, string> {
  const request = new IncomingMessage(new Socket());
  const response = new ServerResponse(request);
  response.setHeader('X-Powered-By', 'something');
  middleware(request, response, () => undefined);
  return Object.fromEntries(
    Object.entries(response.getHeaders()).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.join(', ') : String(value),
    ]),
  );
}

describe(headersOf.name, () => {
  it.each([
    ['the defaults', {}],
    [
      'an API policy with HSTS',
      {
        contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"] } },
        strictTransportSecurity: { maxAge: 600, includeSubDomains: true, preload: false },
        referrerPolicy: { policy: 'no-referrer' as const },
      },
    ],
  ])('should record what helmet writes on a real response, with %s', (_case, options) => {
    const middleware = helmet(options);

    expect(headersOf(middleware)).toEqual({ ...NO_CACHING, ...helmetOnRealResponse(middleware) });
  });

  it('should leave out what helmet removes, and the recorded set cannot be changed', () => {
    const headers = headersOf(helmet({}));

    expect(headers).not.toHaveProperty('x-powered-by');
    expect(headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
    expect(Object.isFrozen(headers)).toBe(true);
  });
});
