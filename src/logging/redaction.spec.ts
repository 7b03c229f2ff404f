import { pino } from 'pino';
import { REDACTED, REDACTED_PATHS } from './redaction.js';

const SECRET = 'secret-value-5b1e';

/** What pino writes for `object` with the redaction the service uses, and nothing else. */
function logged(object: object): string {
  const lines: string[] = [];
  const logger = pino(
    { redact: { paths: [...REDACTED_PATHS], censor: REDACTED } },
    { write: (line: string) => lines.push(line) },
  );
  logger.info(object, 'line');
  return lines.join('');
}

describe('REDACTED_PATHS', () => {
  it.each<[string, object]>([
    ['the Authorization header', { req: { headers: { authorization: `Bearer ${SECRET}` } } }],
    ['the Cookie header', { req: { headers: { cookie: `sid=${SECRET}` } } }],
    ['the X-Refresh-Token header', { req: { headers: { 'x-refresh-token': SECRET } } }],
    ['a Set-Cookie header', { res: { headers: { 'set-cookie': [`sid=${SECRET}`] } } }],
    ['a request body', { req: { body: { email: SECRET } } }],
    ['a body', { body: { email: SECRET } }],
    ['a body in a Nest message', { msg: { body: { email: SECRET } } }],
    ['a password', { password: SECRET }],
    ['an access token', { accessToken: SECRET }],
    ['a refresh token', { refreshToken: SECRET }],
    ['a password in a Nest message', { msg: { password: SECRET } }],
    ['a second-factor code', { code: SECRET }],
    ['a TOTP secret', { secret: SECRET }],
    ['an otpauth URI', { msg: { otpauthUri: SECRET } }],
    ['recovery codes', { recoveryCodes: [SECRET] }],
    ["a mailed link's token", { token: SECRET }],
    ['a second-factor code beside a mailed code', { msg: { secondFactorCode: SECRET } }],
  ])('should censor %s', (_label, object) => {
    const line = logged(object);

    expect(line).not.toContain(SECRET);
    expect(line).toContain(REDACTED);
  });

  it('should leave the other headers alone', () => {
    const line = logged({ req: { headers: { 'user-agent': 'curl/8', authorization: SECRET } } });

    expect(JSON.parse(line)).toMatchObject({
      req: { headers: { 'user-agent': 'curl/8', authorization: REDACTED } },
    });
  });
});
