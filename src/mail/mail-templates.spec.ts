import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config.js';
import { MAIL_KINDS } from './entities/outbox-mail.entity.js';
import { MailTemplates } from './mail-templates.js';

function templatesFrom(templateDirectory: string | null): MailTemplates {
  return new MailTemplates({ mail: { templateDirectory } } as AppConfig);
}

describe(MailTemplates.name, () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-templates-'));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it.each(MAIL_KINDS)('should render the built-in %s mail with its values', (kind) => {
    const mail = templatesFrom(null).render(kind, {
      username: 'alice',
      link: 'https://app.example.com/x?token=abc',
      newEmail: 'alice@new.example.com',
      expiresInMinutes: 30,
      expiresInHours: 48,
    });

    expect(mail.subject).toMatch(/^\S.*\S$/);
    expect(mail.text).toContain('alice');
    expect(mail.html).toContain('alice');
    if (kind !== 'email_changed') {
      expect(mail.text).toContain('https://app.example.com/x?token=abc');
    }
  });

  it('should escape values in the HTML part only', () => {
    const mail = templatesFrom(null).render('email_verification', {
      username: '<b>alice</b>',
      link: 'https://app.example.com/v?token=abc',
      expiresInHours: 48,
    });

    expect(mail.text).toContain('<b>alice</b>');
    expect(mail.html).not.toContain('<b>alice</b>');
    expect(mail.html).toContain('&lt;b&gt;alice&lt;&#x2F;b&gt;');
  });

  it('should use a file of Mail__TemplateDirectory in place of the built-in one, and keep the others', () => {
    writeFileSync(join(directory, 'password_reset.subject.txt'), 'Reset for {{username}}\n\n');
    const sut = templatesFrom(directory);

    const reset = sut.render('password_reset', { username: 'alice', link: 'https://x/?token=1' });
    const verification = sut.render('email_verification', { username: 'alice', link: 'https://x' });

    expect(reset.subject).toBe('Reset for alice');
    expect(verification.subject).toBe('Verifica tu email');
  });

  it('should refuse to start with a template that cannot be parsed, naming its file', () => {
    writeFileSync(join(directory, 'email_changed.html'), '<p>{{#newEmail}}</p>');

    expect(() => templatesFrom(directory)).toThrow(/email_changed\.html cannot be parsed/);
  });

  it('should refuse to start with a template directory that does not exist', () => {
    expect(() => templatesFrom(join(directory, 'missing'))).toThrow(
      /Mail__TemplateDirectory .* does not exist/,
    );
  });
});
