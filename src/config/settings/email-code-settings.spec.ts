import { configurationProblemsOf } from '../../../test/utils/configuration-problems.js';
import { loadAppConfig } from '../app-config.js';

const SECRET = 'unit-test-secret-0123456789abcdef-XYZ';
const SMTP = {
  Jwt__SecretKey: SECRET,
  Smtp__Url: 'smtp://mail.example.com:587',
  Smtp__From: 'Keygate <no-reply@example.com>',
  Mail__ResetPasswordUrl: 'https://app.example.com/reset?token={token}',
  Mail__VerifyEmailUrl: 'https://app.example.com/verify?token={token}',
};
const PAGE = 'https://app.example.com/sign-in/email-code#token={token}';

describe('e-mail code settings', () => {
  it('should be off by default, with a six-digit code that works ten minutes and five tries', () => {
    expect(loadAppConfig(SMTP).emailCode).toEqual({
      enabled: false,
      codeLength: 6,
      lifetimeMinutes: 10,
      maxAttempts: 5,
    });
  });

  it('should take every setting, and the link page into the mail links', () => {
    const config = loadAppConfig({
      ...SMTP,
      EmailCode__Enabled: 'true',
      EmailCode__LinkUrl: PAGE,
      EmailCode__CodeLength: '8',
      EmailCode__LifetimeMinutes: '15',
      EmailCode__MaxAttempts: '3',
    });

    expect(config.emailCode).toEqual({
      enabled: true,
      codeLength: 8,
      lifetimeMinutes: 15,
      maxAttempts: 3,
    });
    expect(config.mail.links.emailCode).toBe(PAGE);
  });

  it('should refuse to start enabled in production without mail', () => {
    expect(
      configurationProblemsOf({ Jwt__SecretKey: SECRET, EmailCode__Enabled: 'true' }),
    ).toContain('EmailCode__Enabled needs mail to send codes: set Smtp__Url');
  });

  it('should start enabled in development, where mail goes to files, with the local page', () => {
    const config = loadAppConfig({
      NODE_ENV: 'development',
      Jwt__SecretKey: SECRET,
      EmailCode__Enabled: 'true',
    });

    expect(config.emailCode.enabled).toBe(true);
    expect(config.mail.links.emailCode).toBe('http://localhost:3000/email-code?token={token}');
  });

  it.each<[string, Record<string, string>, string]>([
    ['no link page with SMTP', {}, 'EmailCode__LinkUrl is required with Smtp__Url'],
    [
      'a link page without {token}',
      { EmailCode__LinkUrl: 'https://app.example.com/sign-in' },
      'EmailCode__LinkUrl must be an http(s) URL containing {token}',
    ],
    ['a code of five digits', { EmailCode__CodeLength: '5' }, 'EmailCode__CodeLength'],
    ['a code of eleven digits', { EmailCode__CodeLength: '11' }, 'EmailCode__CodeLength'],
    ['a lifetime of 0 minutes', { EmailCode__LifetimeMinutes: '0' }, 'EmailCode__LifetimeMinutes'],
    [
      'a lifetime of 61 minutes',
      { EmailCode__LifetimeMinutes: '61' },
      'EmailCode__LifetimeMinutes',
    ],
    ['no tries', { EmailCode__MaxAttempts: '0' }, 'EmailCode__MaxAttempts'],
    ['eleven tries', { EmailCode__MaxAttempts: '11' }, 'EmailCode__MaxAttempts'],
    ['an enabled flag that is no boolean', { EmailCode__Enabled: 'yes' }, 'EmailCode__Enabled'],
  ])('should refuse %s', (_case, change, problem) => {
    expect(configurationProblemsOf({ ...SMTP, EmailCode__Enabled: 'true', ...change })).toContain(
      problem,
    );
  });

  it('should not require the link page while the feature is off', () => {
    expect(loadAppConfig(SMTP).mail.links.emailCode).toBe(
      'http://localhost:3000/email-code?token={token}',
    );
  });
});
