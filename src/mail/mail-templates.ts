import { Injectable } from '@nestjs/common';
import Mustache from 'mustache';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppConfig } from '../config/app-config.js';
import { MAIL_KINDS, type MailKind } from './entities/outbox-mail.entity.js';

/** The built-in templates, shipped with the service: `templates/mail/` at the repository root. */
export const BUILT_IN_TEMPLATE_DIRECTORY = fileURLToPath(
  new URL('../../templates/mail/', import.meta.url),
);

/** The three files of a kind, `<kind>.subject.txt`, `<kind>.txt` and `<kind>.html`. */
const PARTS = { subject: 'subject.txt', text: 'txt', html: 'html' } as const;
type Part = keyof typeof PARTS;

export interface RenderedMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** The values a template may use; every kind gets `username`, link kinds get `link`. */
export type TemplateValues = Readonly<Record<string, string | number>>;

/**
 * Mustache templates of every mail, read and parsed once at start-up, so a broken or missing file
 * stops the service there rather than failing a delivery later. A file of the same name in
 * Mail__TemplateDirectory replaces the built-in one. The HTML part escapes values; the subject
 * and the text part do not (they are not HTML).
 */
@Injectable()
export class MailTemplates {
  private readonly templates: ReadonlyMap<string, string>;

  constructor(config: AppConfig) {
    this.templates = loadTemplates(config.mail.templateDirectory);
  }

  render(kind: MailKind, values: TemplateValues): RenderedMail {
    const render = (part: Part, escape: (text: string) => string): string =>
      Mustache.render(this.template(kind, part), values, {}, { escape });
    return {
      // One line: a header cannot hold a line break.
      subject: render('subject', String).replace(/\s+/g, ' ').trim(),
      text: render('text', String),
      html: render('html', Mustache.escape),
    };
  }

  private template(kind: MailKind, part: Part): string {
    const template = this.templates.get(fileName(kind, part));
    if (template === undefined) {
      throw new Error(`No ${part} template for ${kind} mail`);
    }
    return template;
  }
}

function fileName(kind: MailKind, part: Part): string {
  return `${kind}.${PARTS[part]}`;
}

function loadTemplates(overrides: string | null): Map<string, string> {
  if (overrides !== null && !existsSync(overrides)) {
    throw new Error(`Mail__TemplateDirectory ${overrides} does not exist`);
  }
  const templates = new Map<string, string>();
  for (const kind of MAIL_KINDS) {
    for (const part of Object.keys(PARTS) as Part[]) {
      const name = fileName(kind, part);
      const override = overrides === null ? null : join(overrides, name);
      const path =
        override !== null && existsSync(override)
          ? override
          : join(BUILT_IN_TEMPLATE_DIRECTORY, name);
      const template = readFileSync(path, 'utf8');
      try {
        Mustache.parse(template);
      } catch (error: unknown) {
        throw new Error(
          `The mail template ${path} cannot be parsed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      templates.set(name, template);
    }
  }
  return templates;
}
