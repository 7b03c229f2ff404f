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
import { OAuthGrantsService } from '../grants/oauth-grants.service.js';
import { OAuthClientsService } from '../oauth-clients.service.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { INTERACTION_PATH } from '../provider/provider-configuration.js';
import { isLoopbackRedirectUri } from '../registration/self-registration-rules.js';
import { ProviderHost } from '../provider/provider-host.js';
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

/** The interaction in progress, as the pages need it. */
interface Pending {
  readonly uid: string;
  readonly prompt: string;
  readonly clientName: string;
  readonly returnHost: string;
  readonly formTargets: readonly string[];
  readonly accountId: string | undefined;
  readonly grantId: string | undefined;
  readonly clientId: string;
  readonly missingScopes: readonly string[];
  /** The scopes the request asks for (prompt=consent asks again for those already given). */
  readonly askedScopes: readonly string[];
  readonly missingClaims: readonly string[];
  /** RFC 8707: the scopes asked for each resource indicator, not granted yet. */
  readonly missingResourceScopes: Readonly<Record<string, readonly string[]>>;
  /** The client registered itself (dynamic registration or a metadata document). */
  readonly isUnverified: boolean;
  /** ... and every redirect URI it has is on loopback. */
  readonly isLocalOnly: boolean;
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

  constructor(
    private readonly host: ProviderHost,
    private readonly auth: AuthService,
    private readonly users: UsersService,
    private readonly clients: OAuthClientsService,
    private readonly templates: PageTemplates,
    private readonly grants: OAuthGrantsService,
    config: AppConfig,
  ) {
    this.formTokens = new FormTokens(config.jwt.secret);
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
    if (!this.formTokens.accepts(pending.uid, form.csrf) || pending.prompt !== 'consent') {
      return this.formRefused(pending);
    }
    const decision = single(form.decision);
    if (decision === 'deny') {
      return this.finish(
        req,
        res,
        { error: 'access_denied', error_description: 'End-User aborted interaction' },
        false,
      );
    }
    if (decision !== 'approve' || pending.accountId === undefined) {
      return this.formRefused(pending);
    }
    const provider = this.host.current();
    const grant =
      (pending.grantId === undefined ? undefined : await provider.Grant.find(pending.grantId)) ??
      new provider.Grant({ accountId: pending.accountId, clientId: pending.clientId });
    if (pending.missingScopes.length > 0) {
      grant.addOIDCScope(pending.missingScopes.join(' '));
    }
    if (pending.missingClaims.length > 0) {
      grant.addOIDCClaims([...pending.missingClaims]);
    }
    for (const [indicator, scopes] of Object.entries(pending.missingResourceScopes)) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    await this.grants.record(
      pending.accountId,
      pending.clientId,
      grant.getOIDCScope().split(' '),
      grantId,
      {
        // What the person approved this time: the missing scopes, or with prompt=consent on a
        // grant that already covers the request, what the request asks.
        approved: pending.missingScopes.length > 0 ? pending.missingScopes : pending.askedScopes,
        origin,
      },
    );
    return this.finish(req, res, { consent: { grantId } }, true);
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
    const clientId = textOf(details.params.client_id);
    const client = await this.clients.find(clientId);
    // Not in the table: a client of a metadata document, which the library holds in its cache.
    const documented =
      client === null
        ? await this.host
            .current()
            .Client.find(clientId)
            .catch(() => undefined)
        : undefined;
    const redirectUris = client?.redirectUris ?? documented?.redirectUris ?? [];
    const isUnverified = client?.isSelfRegistered ?? documented !== undefined;
    const redirectUri = textOf(details.params.redirect_uri);
    const target = targetOf(redirectUri);
    const promptDetails = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    return {
      uid: details.uid,
      prompt: details.prompt.name,
      clientId,
      clientName: client?.name ?? documented?.clientName ?? clientId,
      isUnverified,
      isLocalOnly:
        isUnverified && redirectUris.length > 0 && redirectUris.every(isLoopbackRedirectUri),
      returnHost: target.host,
      formTargets: target.origin === null ? [] : [target.origin],
      accountId: details.session?.accountId,
      grantId: details.grantId,
      missingScopes: promptDetails.missingOIDCScope ?? [],
      askedScopes: textOf(details.params.scope)
        .split(' ')
        .filter((scope) => scope !== ''),
      missingClaims: promptDetails.missingOIDCClaims ?? [],
      missingResourceScopes: promptDetails.missingResourceScopes ?? {},
    };
  }

  private signInPage(pending: Pending, status: number, values: PageValues): PageAnswer {
    return this.page('sign-in', status, pending, {
      action: `${INTERACTION_PATH}/${pending.uid}/login`,
      email: '',
      ...values,
    });
  }

  private async consentPage(pending: Pending): Promise<PageAnswer> {
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
        ...(pending.missingScopes.length > 0 || resourceScopes.length > 0
          ? pending.missingScopes
          : pending.askedScopes
        ).map((scope) => SCOPE_TEXTS[scope] ?? scope),
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

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The host (and port) a redirect URI returns to, and the origin a form may lead to. */
function targetOf(redirectUri: string): { host: string; origin: string | null } {
  try {
    const url = new URL(redirectUri);
    if (url.protocol === 'https:' || url.protocol === 'http:') {
      return { host: url.host, origin: url.origin };
    }
    // A native application's private-use scheme: the scheme is all there is to show.
    return { host: url.protocol, origin: url.protocol };
  } catch {
    return { host: '', origin: null };
  }
}
