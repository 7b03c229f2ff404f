import { Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InteractionResults } from 'oidc-provider';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { LoginDto } from '../../auth/dto/login.dto.js';
import { AuthService } from '../../auth/auth.service.js';
import { PasswordsMessages } from '../../passwords/passwords.messages.js';
import { UnauthorizedError } from '../../common/errors/domain-errors.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { AppConfig } from '../../config/app-config.js';
import { forRequest } from '../../logging/log-fields.js';
import { MfaMessages } from '../../two-factor/mfa.messages.js';
import { UsersService } from '../../users/users.service.js';
import { OAuthClientsService } from '../oauth-clients.service.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { INTERACTION_PATH } from '../provider/provider-configuration.js';
import { ProviderHost } from '../provider/provider-host.js';
import { ConsentApproval, CONSENT_DENIED } from '../consent/consent-approval.js';
import {
  pendingOf,
  scopesToApprove,
  textOf,
  type PendingInteraction as Pending,
} from '../consent/pending-interaction.js';
import { FormTokens } from './form-token.js';
import { PageTemplates, type PageName, type PageValues } from './page-templates.js';

/** What a hosted page answers: a page, or a redirect back into the protocol flow. */
export type PageAnswer =
  | {
      readonly kind: 'page';
      readonly status: number;
      readonly html: string;
      /** Where the page's form may lead, beyond this origin (its redirects end at the client). */
      readonly formTargets: readonly string[];
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

  constructor(
    private readonly host: ProviderHost,
    private readonly auth: AuthService,
    private readonly users: UsersService,
    private readonly clients: OAuthClientsService,
    private readonly templates: PageTemplates,
    private readonly approval: ConsentApproval,
    config: AppConfig,
  ) {
    this.formTokens = new FormTokens(config.jwt.secret);
    this.consentUrl = config.oauthServer?.consentUrl ?? null;
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
      const started = await this.auth.signIn(request, origin);
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
    const client = await this.clients.find(textOf(details.params.client_id));
    return pendingOf(
      details,
      client,
      this.consentUrl === null ? [] : [new URL(this.consentUrl).origin],
    );
  }

  private signInPage(pending: Pending, status: number, values: PageValues): PageAnswer {
    return this.page('sign-in', status, pending, {
      action: `${INTERACTION_PATH}/${pending.uid}/login`,
      email: '',
      ...values,
    });
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
      // prompt=consent when the grant covers everything asked: the page lists what it covers. A
      // resource's scopes are shown by name: they are the API's own words, as text.
      scopes: [
        ...scopesToApprove(pending).map((scope) => SCOPE_TEXTS[scope] ?? scope),
        ...resourceScopes,
      ],
    });
  }

  private page(name: PageName, status: number, pending: Pending, values: PageValues): PageAnswer {
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
