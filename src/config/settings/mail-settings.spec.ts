import { configurationProblemsOf } from '../../../test/utils/configuration-problems.js';
import { loadAppConfig } from '../app-config.js';

const SECRET = 'unit-test-secret-0123456789abcdef-XYZ';
const SMTP = {
  Jwt__SecretKey: SECRET,
  Smtp__Url: 'smtp://mailer:s3cret-pass@mail.example.com:587',
  Smtp__From: 'Keygate <no-reply@example.com>',
  Mail__ResetPasswordUrl: 'https://app.example.com/reset?token={token}',
  Mail__VerifyEmailUrl: 'https://app.example.com/verify?token={token}',
};

describe('mail settings', () => {
  it('should send through SMTP whenever Smtp__Url is set', () => {
    const { mail } = loadAppConfig(SMTP);

    expect(mail.transport).toEqual({ kind: 'smtp', url: SMTP.Smtp__Url });
    expect(mail.from).toBe(SMTP.Smtp__From);
    expect(mail.links).toEqual({
      resetPassword: SMTP.Mail__ResetPasswordUrl,
      verifyEmail: SMTP.Mail__VerifyEmailUrl,
      // Unused while EmailCode__Enabled is off, so not required.
      emailCode: 'http://localhost:3000/email-code?token={token}',
    });
  });

  it.each([
    ['development', { NODE_ENV: 'development' }, { kind: 'files', directory: 'data/mail' }],
    ['production', {}, { kind: 'off' }],
  ])('should choose the transport without Smtp__Url in %s', (_mode, raw, transport) => {
    expect(loadAppConfig({ Jwt__SecretKey: SECRET, ...raw }).mail.transport).toEqual(transport);
  });

  it.each<[string, Record<string, string | undefined>, string]>([
    ['a URL of another scheme', { Smtp__Url: 'http://mail.example.com' }, 'Smtp__Url must be'],
    ['a URL without a host', { Smtp__Url: 'smtp://' }, 'Smtp__Url must be'],
    ['no sender', { Smtp__From: undefined }, 'Smtp__From is required with Smtp__Url'],
    ['two senders', { Smtp__From: 'a@example.com, b@example.com' }, 'Smtp__From must be one'],
    ['no reset page', { Mail__ResetPasswordUrl: undefined }, 'Mail__ResetPasswordUrl is required'],
    [
      'a reset page without {token}',
      { Mail__ResetPasswordUrl: 'https://app.example.com/reset' },
      'Mail__ResetPasswordUrl must be an http(s) URL containing {token}',
    ],
    [
      'a verification page that is no URL',
      { Mail__VerifyEmailUrl: 'verify/{token}' },
      'Mail__VerifyEmailUrl must be an http(s) URL containing {token}',
    ],
  ])('should refuse %s', (_case, change, problem) => {
    const raw = Object.fromEntries(
      Object.entries({ ...SMTP, ...change }).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    );

    expect(configurationProblemsOf(raw)).toContain(problem);
  });

  it('should never show the SMTP URL, which may carry a password', () => {
    const message = configurationProblemsOf({
      ...SMTP,
      Smtp__Url: 'ftp://mailer:s3cret-pass@mail.example.com',
    });

    expect(message).not.toContain('s3cret-pass');
  });

  it('should refuse Auth__RequireVerifiedEmail in production without SMTP', () => {
    expect(
      configurationProblemsOf({ Jwt__SecretKey: SECRET, Auth__RequireVerifiedEmail: 'true' }),
    ).toContain('Auth__RequireVerifiedEmail needs mail to verify addresses: set Smtp__Url');
  });

  it('should allow Auth__RequireVerifiedEmail in development, where mail goes to files', () => {
    const config = loadAppConfig({
      NODE_ENV: 'development',
      Jwt__SecretKey: SECRET,
      Auth__RequireVerifiedEmail: 'true',
    });

    expect(config.accountFlows.requireVerifiedEmail).toBe(true);
  });
});
