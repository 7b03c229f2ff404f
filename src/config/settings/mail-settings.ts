import { isEmail } from 'class-validator';
import addressparser from 'nodemailer/lib/addressparser';
import type { EnvironmentVariables } from '../environment-variables.js';

/** Where mail goes: an SMTP server, `.eml` files (development without SMTP), or nowhere. */
export type MailTransportConfig =
  | { readonly kind: 'smtp'; readonly url: string }
  | { readonly kind: 'files'; readonly directory: string }
  | { readonly kind: 'off' };

export interface MailConfig {
  readonly transport: MailTransportConfig;
  /** The From header, `Name <address>` or a bare address. */
  readonly from: string;
  /** Link templates of the operator's front end, each with one or more `{token}`. */
  readonly links: {
    readonly resetPassword: string;
    readonly verifyEmail: string;
    /** The page a sign-in link opens (EmailCode__LinkUrl); the development one when unset. */
    readonly emailCode: string;
  };
  /** Files here replace the built-in templates of the same name; null: built-in only. */
  readonly templateDirectory: string | null;
  readonly minIntervalSeconds: number;
  readonly maxAttempts: number;
  readonly sendTimeoutSeconds: number;
  readonly pollIntervalSeconds: number;
  readonly retentionDays: number;
}

export interface AccountFlowsConfig {
  /** Login and refresh refuse accounts whose e-mail is not verified. */
  readonly requireVerifiedEmail: boolean;
  readonly passwordResetTokenMinutes: number;
  readonly emailVerificationTokenHours: number;
}

/** Development without SMTP writes each mail as a file here, relative to the working directory. */
export const MAIL_FILES_DIRECTORY = 'data/mail';
export const TOKEN_PLACEHOLDER = '{token}';
const DEVELOPMENT_FROM = 'Keygate <no-reply@localhost>';
const DEVELOPMENT_LINKS = {
  resetPassword: `http://localhost:3000/reset-password?token=${TOKEN_PLACEHOLDER}`,
  verifyEmail: `http://localhost:3000/verify-email?token=${TOKEN_PLACEHOLDER}`,
  emailCode: `http://localhost:3000/email-code?token=${TOKEN_PLACEHOLDER}`,
} as const;

/**
 * The mail settings and the rules between them. SMTP is used whenever `Smtp__Url` is set; without
 * it, development writes files and production sends nothing (the routes that need mail then
 * answer 503). Values are never echoed: the URL may carry a password.
 */
export function checkMail(
  env: EnvironmentVariables,
  isDevelopment: boolean,
): { mail?: MailConfig; problems: string[] } {
  const problems: string[] = [];
  const transport = mailTransport(env.Smtp__Url, isDevelopment, problems);
  const needsExplicit = transport.kind === 'smtp';
  const from = env.Smtp__From ?? (needsExplicit ? undefined : DEVELOPMENT_FROM);
  if (from === undefined) {
    problems.push('Smtp__From is required with Smtp__Url');
  } else if (!isOneAddress(from)) {
    problems.push('Smtp__From must be one e-mail address, optionally with a name');
  }
  const link = (
    key: 'Mail__ResetPasswordUrl' | 'Mail__VerifyEmailUrl' | 'EmailCode__LinkUrl',
    fallback: string,
    isUsed = true,
  ) => {
    const value = env[key] ?? (needsExplicit && isUsed ? undefined : fallback);
    if (value === undefined) {
      problems.push(`${key} is required with Smtp__Url`);
    } else if (!isLinkTemplate(value)) {
      problems.push(`${key} must be an http(s) URL containing ${TOKEN_PLACEHOLDER}`);
    }
    return value ?? fallback;
  };
  const links = {
    resetPassword: link('Mail__ResetPasswordUrl', DEVELOPMENT_LINKS.resetPassword),
    verifyEmail: link('Mail__VerifyEmailUrl', DEVELOPMENT_LINKS.verifyEmail),
    emailCode: link('EmailCode__LinkUrl', DEVELOPMENT_LINKS.emailCode, env.EmailCode__Enabled),
  };
  if (env.Auth__RequireVerifiedEmail && transport.kind === 'off') {
    problems.push('Auth__RequireVerifiedEmail needs mail to verify addresses: set Smtp__Url');
  }
  // Enabled without mail is a mistake worth stopping for: every request would answer 202 and
  // nothing would ever arrive.
  if (env.EmailCode__Enabled && transport.kind === 'off') {
    problems.push('EmailCode__Enabled needs mail to send codes: set Smtp__Url');
  }
  if (problems.length > 0 || from === undefined) {
    return { problems };
  }
  return {
    problems,
    mail: {
      transport,
      from,
      links,
      templateDirectory: env.Mail__TemplateDirectory === '' ? null : env.Mail__TemplateDirectory,
      minIntervalSeconds: env.Mail__MinIntervalSeconds,
      maxAttempts: env.Mail__MaxAttempts,
      sendTimeoutSeconds: env.Mail__SendTimeoutSeconds,
      pollIntervalSeconds: env.Mail__PollIntervalSeconds,
      retentionDays: env.Mail__RetentionDays,
    },
  };
}

export function accountFlows(env: EnvironmentVariables): AccountFlowsConfig {
  return {
    requireVerifiedEmail: env.Auth__RequireVerifiedEmail,
    passwordResetTokenMinutes: env.Auth__PasswordResetTokenMinutes,
    emailVerificationTokenHours: env.Auth__EmailVerificationTokenHours,
  };
}

function mailTransport(
  url: string | undefined,
  isDevelopment: boolean,
  problems: string[],
): MailTransportConfig {
  if (url === undefined) {
    return isDevelopment ? { kind: 'files', directory: MAIL_FILES_DIRECTORY } : { kind: 'off' };
  }
  if (!isSmtpUrl(url)) {
    problems.push('Smtp__Url must be an smtp:// or smtps:// URL with a host');
  }
  return { kind: 'smtp', url };
}

function isSmtpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function isOneAddress(value: string): boolean {
  const parsed = addressparser(value, { flatten: true });
  return (
    parsed.length === 1 &&
    isEmail(parsed[0]?.address ?? '', { require_tld: false, allow_ip_domain: true })
  );
}

/** Checked on the text as written: URL parsing would percent-encode the braces of `{token}`. */
function isLinkTemplate(value: string): boolean {
  if (!value.includes(TOKEN_PLACEHOLDER)) {
    return false;
  }
  try {
    const url = new URL(value.replaceAll(TOKEN_PLACEHOLDER, 'token'));
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
