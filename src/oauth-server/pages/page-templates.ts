import { Injectable } from '@nestjs/common';
import Mustache from 'mustache';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The hosted pages' templates, shipped with the service: `templates/oauth/`. */
const TEMPLATE_DIRECTORY = new URL('../../../templates/oauth/', import.meta.url);

export type PageName =
  | 'sign-in'
  | 'consent'
  | 'error'
  | 'logout'
  | 'logged-out'
  | 'device-code'
  | 'device-confirm'
  | 'device-done';
const PAGES: readonly PageName[] = [
  'sign-in',
  'consent',
  'error',
  'logout',
  'logged-out',
  'device-code',
  'device-confirm',
  'device-done',
];

export type PageValues = Readonly<Record<string, unknown>>;

/** The sign-in page's only script (passkeys), a file of the templates served from this origin. */
const PASSKEY_SCRIPT_FILE = 'passkey-sign-in.js';
/** Where the sign-in page loads it from. */
export const PASSKEY_SCRIPT_PATH = '/oauth/interaction/assets/passkey-sign-in.js';

/**
 * The hosted pages' policy: no style, no resource at all, and no script but, on a page that
 * offers passkeys (`withScript`), the script files of this origin (never inline); forms post to
 * this origin, and to the origins its answer may redirect them to (a browser holds a form's
 * redirects to `form-action` as well).
 */
export function pagePolicy(formTargets: readonly string[], withScript = false): string {
  return [
    "default-src 'none'",
    ...(withScript ? ["script-src 'self'"] : []),
    "base-uri 'none'",
    `form-action 'self'${formTargets.map((target) => ` ${target}`).join('')}`,
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The hosted pages' Mustache templates, read and parsed once at start-up. Every value is escaped
 * as HTML (`{{ }}` only; the templates hold no `{{{ }}}`), so a client's name holding markup is
 * shown as text.
 */
@Injectable()
export class PageTemplates {
  private readonly templates: ReadonlyMap<PageName, string>;
  /** The passkey script of the sign-in page, served as it is. */
  readonly passkeyScript: string;

  constructor() {
    this.templates = new Map(
      PAGES.map((name) => {
        const template = readFileSync(
          fileURLToPath(new URL(`${name}.html`, TEMPLATE_DIRECTORY)),
          'utf8',
        );
        Mustache.parse(template);
        return [name, template];
      }),
    );
    this.passkeyScript = readFileSync(
      fileURLToPath(new URL(PASSKEY_SCRIPT_FILE, TEMPLATE_DIRECTORY)),
      'utf8',
    );
  }

  render(name: PageName, values: PageValues): string {
    return Mustache.render(this.templates.get(name) ?? '', values, {}, { escape: Mustache.escape });
  }
}
