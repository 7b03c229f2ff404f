import { Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InteractionResults } from 'oidc-provider';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { LoginDto } from '../../auth/dto/login.dto.js';
import { AuthService } from '../../auth/auth.service.js';
import type { StartedLogin } from '../../tokens/started-login.js';
import { EmailCodeLoginDto } from '../../email-codes/dto/email-code-login.dto.js';
import { SendEmailCodeDto } from '../../email-codes/dto/send-email-code.dto.js';
import { EmailCodesMessages } from '../../email-codes/email-codes.messages.js';
import { EmailCodesService } from '../../email-codes/email-codes.service.js';
import { PasskeyLoginDto } from '../../passkeys/dto/passkey-login.dto.js';
import { PasskeyFlowsService } from '../../passkeys/passkey-flows.service.js';
import { PasskeysMessages } from '../../passkeys/passkeys.messages.js';
import { Passkeys } from '../../passkeys/passkeys.service.js';
import { PasswordsMessages } from '../../passwords/passwords.messages.js';
import { UnauthorizedError } from '../../common/errors/domain-errors.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { AppConfig } from '../../config/app-config.js';
import { forRequest } from '../../logging/log-fields.js';
import { MfaMessages } from '../../two-factor/mfa.messages.js';
import { UsersService } from '../../users/users.service.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { INTERACTION_PATH } from '../provider/provider-configuration.js';
import { ProviderHost } from '../provider/provider-host.js';
import { ConsentApproval, CONSENT_DENIED } from '../consent/consent-approval.js';
import {
  scopesToApprove,
  type PendingInteraction as Pending,
} from '../consent/pending-interaction.js';
import { PendingInteractions } from '../consent/pending-interactions.js';
import { FormTokens } from './form-token.js';
import {
  PageTemplates,
  PASSKEY_SCRIPT_PATH,
  type PageName,
  type PageValues,
} from './page-templates.js';

/** What a hosted page answers: a page, or a redirect back into the protocol flow. */
export type PageAnswer =
  | {
      readonly kind: 'page';
      readonly status: number;
      readonly html: string;
      /** Where the page's form may lead, beyond this origin (its redirects end at the client). */
      readonly formTargets: readonly string[];
      /** The page loads its script (the sign-in page offering passkeys). */
      readonly withScript?: boolean;
    }
  | { readonly kind: 'redirect'; readonly location: string };

/** The fields a hosted form posts, as parsed from `application/x-www-form-urlencoded`. */
export type FormFields = Readonly<Record<string, string | string[] | undefined>>;

const SCOPE_TEXTS: Readonly<Record<string, string>> = {
  openid: OAuthServerMessages.scopeOpenid,
  profile: OAuthServerMessages.scopeProfile,
  email: OAuthServerMessages.scopeEmail,
  offline_access: OAuthServerMessages.scopeOfflineAccess,
};

/** What the sign-in page shows besides its forms. */
interface SignInValues {
  readonly error?: string;
  /** A message that is not an error (a code was asked for), in a role=status region. */
  readonly notice?: string;
  readonly email?: string;
  /** The password form asks for the second factor's code too. */
  readonly askCode?: boolean;
  /**
   * The mailed code's form instead of the password's; with `mailedCode` (the code the person
   * typed, which its second factor's step posts again), it asks for the second factor's code.
   */
  readonly mailed?: { readonly mailedCode?: string };
}

/**
 * Keygate's hosted pages for the provider's interactions: sign-in with e-mail and password under
 * the interface's login rules (AuthService.signIn: lockout, deactivation, the second factor and
 * their Spanish messages, the audit and the session they write), then consent. Every form
 * carries the interaction's CSRF token (FormTokens); a form without it changes nothing.
 */
@Injectable()
export class InteractionPagesService {
  private readonly logger = new Logger(InteractionPagesService.name);
  private readonly formTokens: FormTokens;
  /** A team's own consent page (OAuthServer__ConsentUrl): consent is given there, not here. */
  private readonly consentUrl: string | null;
  private readonly emailCodesEnabled: boolean;

  constructor(
    private readonly host: ProviderHost,
    private readonly auth: AuthService,
    private readonly users: UsersService,
    private readonly templates: PageTemplates,
    private readonly approval: ConsentApproval,
    private readonly pendingInteractions: PendingInteractions,
    private readonly emailCodes: EmailCodesService,
    private readonly passkeys: Passkeys,
    private readonly passkeyFlows: PasskeyFlowsService,
    config: AppConfig,
  ) {
    this.formTokens = new FormTokens(config.jwt.secret);
    this.emailCodesEnabled = config.emailCode.enabled;
    this.consentUrl = config.oauthServer?.consentUrl ?? null;
  }

  /** The sign-in page's passkey script, served from PASSKEY_SCRIPT_PATH. */
  passkeyScript(): string {
    return this.templates.passkeyScript;
  }

  /** The page of the interaction's current step: sign-in or consent. */
  async show(req: IncomingMessage, res: ServerResponse): Promise<PageAnswer> {
    const pending = await this.pending(req, res);
    if (pending === null) {
      return this.expired();
    }
    return pending.prompt === 'login'
      ? this.signInPage(pending, 200, {})
      : this.consentPage(pending);
  }

  async signIn(
    req: IncomingMessage,
    res: ServerResponse,
    form: FormFields,
    origin: RequestOrigin,
  ): Promise<PageAnswer> {
    const pending = await this.pending(req, res);
    if (pending === null) {
      return this.expired();
    }
    if (!this.formTokens.accepts(pending.uid, form.csrf)) {
      return this.formRefused(pending);
    }
    if (pending.prompt !== 'login') {
      return this.consentPage(pending);
    }
    const email = single(form.email);
    const password = single(form.password);
    const code = single(form.code);
    if (email.trim() === '' || password === '') {
      return this.signInPage(pending, 400, {
        error: OAuthServerMessages.missingCredentials,
        email,
      });
    }
    // The API's own rules for a login body (lengths, characters), as its validation pipe applies
    // them: a form that breaks them is refused as wrong credentials, before any work.
    const request = plainToInstance(LoginDto, {
      email,
      password,
      ...(code.trim() === '' ? {} : { code: code.trim() }),
    });
    if (validateSync(request, { whitelist: true }).length > 0) {
      return this.signInPage(pending, 401, { error: PasswordsMessages.invalidCredentials, email });
    }
    try {
      return await this.signedIn(
        req,
        res,
        pending,
        await this.auth.signIn(request, origin),
        origin,
      );
    } catch (error: unknown) {
      if (!(error instanceof UnauthorizedError)) {
        throw error;
      }
      return this.signInPage(pending, 401, {
        error: error.message,
        email,
        askCode: error.message === MfaMessages.codeRequired || code.trim() !== '',
      });
    }
  }

  /**
   * Mails a sign-in code through EmailCodesService (its rules: the same answer for every address,
   * Mail__MinIntervalSeconds between codes), then shows the form for the code.
   */
  async sendEmailCode(
    req: IncomingMessage,
    res: ServerResponse,
    form: FormFields,
    origin: RequestOrigin,
  ): Promise<PageAnswer> {
    const checked = await this.mailedCodeForm(req, res, form);
    if (checked.kind !== 'pending') {
      return checked.answer;
    }
    const { pending } = checked;
    const email = single(form.email).trim();
    const request = plainToInstance(SendEmailCodeDto, { email });
    if (validateSync(request, { whitelist: true }).length > 0) {
      return this.signInPage(pending, 400, { error: OAuthServerMessages.invalidEmail, email });
    }
    const { message } = await this.emailCodes.send(request, origin);
    return this.signInPage(pending, 200, { notice: message, email, mailed: {} });
  }

  /**
   * Signs in with the mailed code under EmailCodesService's rules (tries, lockout, deactivation,
   * the second factor and their messages). An account with a second factor is asked for its code
   * on a second form that posts the mailed code again (it is used up only by a sign-in).
   */
  async emailCodeSignIn(
    req: IncomingMessage,
    res: ServerResponse,
    form: FormFields,
    origin: RequestOrigin,
  ): Promise<PageAnswer> {
    const checked = await this.mailedCodeForm(req, res, form);
    if (checked.kind !== 'pending') {
      return checked.answer;
    }
    const { pending } = checked;
    const email = single(form.email);
    const mailedCode = single(form.mailedCode).trim();
    const typed = single(form.code).trim();
    const isFactorStep = mailedCode !== '';
    const request = plainToInstance(
      EmailCodeLoginDto,
      isFactorStep
        ? { email, code: mailedCode, ...(typed === '' ? {} : { secondFactorCode: typed }) }
        : { email, code: typed },
    );
    // The API's rules for the body: a form that breaks them is refused as a wrong code.
    if (validateSync(request, { whitelist: true }).length > 0) {
      return this.signInPage(pending, 401, {
        error: isFactorStep ? MfaMessages.invalidCode : EmailCodesMessages.invalidCode,
        email,
        mailed: isFactorStep ? { mailedCode } : {},
      });
    }
    try {
      return await this.signedIn(
        req,
        res,
        pending,
        await this.emailCodes.signIn(request, origin),
        origin,
      );
    } catch (error: unknown) {
      if (!(error instanceof UnauthorizedError)) {
        throw error;
      }
      const asksFactor =
        error.message === MfaMessages.codeRequired ||
        (isFactorStep && error.message === MfaMessages.invalidCode);
      return this.signInPage(pending, 401, {
        error: error.message,
        email,
        mailed: asksFactor ? { mailedCode: request.code ?? '' } : {},
      });
    }
  }

  /**
   * Signs in with a passkey's assertion (the page's script posts `credential.toJSON()` as
   * `passkey`) under PasskeyFlowsService's rules, as POST /api/auth/passkeys/login/verify does.
   */
  async passkeySignIn(
    req: IncomingMessage,
    res: ServerResponse,
    form: FormFields,
    origin: RequestOrigin,
  ): Promise<PageAnswer> {
    const checked = await this.signInForm(req, res, form);
    if (checked.kind !== 'pending') {
      return checked.answer;
    }
    const { pending } = checked;
    if (!this.passkeys.isEnabled) {
      return this.errorPage(503, PasskeysMessages.unavailable);
    }
    const request = plainToInstance(PasskeyLoginDto, { response: jsonOf(single(form.passkey)) });
    if (validateSync(request, { whitelist: true }).length > 0) {
      return this.signInPage(pending, 400, { error: PasskeysMessages.verificationFailed });
    }
    try {
      return await this.signedIn(
        req,
        res,
        pending,
        await this.passkeyFlows.signIn(request, origin),
        origin,
      );
    } catch (error: unknown) {
      if (!(error instanceof UnauthorizedError)) {
        throw error;
      }
      return this.signInPage(pending, 401, { error: error.message });
    }
  }

  async consent(
    req: IncomingMessage,
    res: ServerResponse,
    form: FormFields,
    origin: RequestOrigin,
  ): Promise<PageAnswer> {
    const pending = await this.pending(req, res);
    if (pending === null) {
      return this.expired();
    }
    // With a team's consent page, this form is not theirs: posting it would skip their page.
    if (
      !this.formTokens.accepts(pending.uid, form.csrf) ||
      pending.prompt !== 'consent' ||
      this.consentUrl !== null
    ) {
      return this.formRefused(pending);
    }
    const decision = single(form.decision);
    if (decision === 'deny') {
      return this.finish(req, res, CONSENT_DENIED, false);
    }
    const { accountId } = pending;
    if (decision !== 'approve' || accountId === undefined) {
      return this.formRefused(pending);
    }
    const result = await this.approval.approve({ ...pending, accountId }, origin);
    return this.finish(req, res, result, true);
  }

  /** The interaction of a sign-in form whose CSRF token is right, or the answer instead. */
  private async signInForm(
    req: IncomingMessage,
    res: ServerResponse,
    form: FormFields,
  ): Promise<
    | { readonly kind: 'pending'; readonly pending: Pending }
    | { readonly kind: 'answer'; readonly answer: PageAnswer }
  > {
    const pending = await this.pending(req, res);
    if (pending === null) {
      return { kind: 'answer', answer: this.expired() };
    }
    if (!this.formTokens.accepts(pending.uid, form.csrf)) {
      return { kind: 'answer', answer: this.formRefused(pending) };
    }
    if (pending.prompt !== 'login') {
      return { kind: 'answer', answer: await this.consentPage(pending) };
    }
    return { kind: 'pending', pending };
  }

  /** As signInForm, for the mailed code's forms: they exist only while EmailCode__Enabled. */
  private async mailedCodeForm(
    req: IncomingMessage,
    res: ServerResponse,
    form: FormFields,
  ): ReturnType<InteractionPagesService['signInForm']> {
    const checked = await this.signInForm(req, res, form);
    if (checked.kind === 'pending' && !this.emailCodesEnabled) {
      return { kind: 'answer', answer: this.errorPage(404, EmailCodesMessages.disabled) };
    }
    return checked;
  }

  /** Ends the login step with the Keygate session the sign-in started (BrowserSessions). */
  private signedIn(
    req: IncomingMessage,
    res: ServerResponse,
    pending: Pending,
    started: StartedLogin,
    origin: RequestOrigin,
  ): Promise<PageAnswer> {
    const result: InteractionResults = {
      login: {
        accountId: started.response.user.id,
        amr: [...started.authMethods],
        remember: true,
        keygateSessionId: started.sessionId,
      },
    };
    this.logger.log(
      `Signed in ${started.response.user.id} for OAuth client ${pending.clientId}`,
      forRequest(origin.requestId),
    );
    return this.finish(req, res, result, false);
  }

  private async finish(
    req: IncomingMessage,
    res: ServerResponse,
    result: InteractionResults,
    merge: boolean,
  ): Promise<PageAnswer> {
    const location = await this.host
      .current()
      .interactionResult(req, res, result, { mergeWithLastSubmission: merge });
    return { kind: 'redirect', location };
  }

  private async pending(req: IncomingMessage, res: ServerResponse): Promise<Pending | null> {
    let details: Awaited<ReturnType<ReturnType<ProviderHost['current']>['interactionDetails']>>;
    try {
      details = await this.host.current().interactionDetails(req, res);
    } catch {
      // No interaction cookie, another browser's interaction, or an expired one.
      return null;
    }
    return this.pendingInteractions.of(details);
  }

  /**
   * The sign-in page: the password form (or the mailed code's), the button that mails a code when
   * EmailCode__Enabled, and when passkeys are on a passkey form whose options carry a challenge of
   * their own (one per page shown, as each POST .../login/options makes one).
   */
  private async signInPage(
    pending: Pending,
    status: number,
    values: SignInValues,
  ): Promise<PageAnswer> {
    const base = `${INTERACTION_PATH}/${pending.uid}`;
    const sendAction = `${base}/email-code/send`;
    const offersPasskey =
      this.passkeys.isEnabled && values.mailed === undefined && values.askCode !== true;
    const answer = this.page('sign-in', status, pending, {
      action: `${base}/login`,
      email: '',
      ...values,
      mailed:
        values.mailed === undefined
          ? null
          : { ...values.mailed, action: `${base}/email-code`, sendAction, restart: base },
      emailCode: this.emailCodesEnabled ? { sendAction } : null,
      passkey: offersPasskey
        ? {
            action: `${base}/passkey`,
            options: JSON.stringify(await this.passkeys.authenticationOptions()),
            failed: OAuthServerMessages.passkeyFailed,
            script: PASSKEY_SCRIPT_PATH,
          }
        : null,
    });
    return { ...answer, withScript: offersPasskey };
  }

  private async consentPage(pending: Pending): Promise<PageAnswer> {
    if (this.consentUrl !== null) {
      return { kind: 'redirect', location: consentRequestUrl(this.consentUrl, pending.uid) };
    }
    const account =
      pending.accountId === undefined ? null : await this.users.findById(pending.accountId);
    const resourceScopes = Object.values(pending.missingResourceScopes).flat();
    return this.page('consent', 200, pending, {
      action: `${INTERACTION_PATH}/${pending.uid}/consent`,
      accountEmail: account?.email ?? '',
      unverifiedNotice: pending.isUnverified ? OAuthServerMessages.unverifiedClient : '',
      localhostNotice: pending.isLocalOnly ? OAuthServerMessages.localhostOnlyClient : '',
      // prompt=consent when the grant covers everything asked: the page lists what it covers. A
      // resource's scopes are shown by name: they are the API's own words, as text.
      scopes: [
        ...scopesToApprove(pending).map((scope) => SCOPE_TEXTS[scope] ?? scope),
        ...resourceScopes,
      ],
    });
  }

  private page(
    name: PageName,
    status: number,
    pending: Pending,
    values: PageValues,
  ): Extract<PageAnswer, { kind: 'page' }> {
    return {
      kind: 'page',
      status,
      formTargets: pending.formTargets,
      html: this.templates.render(name, {
        clientName: pending.clientName,
        returnHost: pending.returnHost,
        csrf: this.formTokens.of(pending.uid),
        ...values,
      }),
    };
  }

  private expired(): PageAnswer {
    return this.errorPage(400, OAuthServerMessages.interactionExpired);
  }

  private formRefused(_pending: Pending): PageAnswer {
    return this.errorPage(403, OAuthServerMessages.formRefused);
  }

  private errorPage(status: number, message: string): PageAnswer {
    return {
      kind: 'page',
      status,
      formTargets: [],
      html: this.templates.render('error', { message }),
    };
  }
}

/** A field sent once, as sent (a password is never trimmed); '' when absent or repeated. */
function single(value: string | string[] | undefined): string {
  return typeof value === 'string' ? value : '';
}

/** The team's consent page, told which request to read (docs/operations/oauth-server.md). */
function consentRequestUrl(consentUrl: string, uid: string): string {
  const url = new URL(consentUrl);
  url.searchParams.set('consent_challenge', uid);
  return url.href;
}

/** A field's JSON, or null when it is none. */
function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
