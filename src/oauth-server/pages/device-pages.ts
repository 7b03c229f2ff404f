import { Injectable } from '@nestjs/common';
import type { Configuration, ErrorOut, KoaContextWithOIDC } from 'oidc-provider';
import { setBounded } from '../../common/collections/bounded-map.js';
import { UNKNOWN_CLIENT_IP } from '../../common/network/client-address.js';
import { Clock } from '../../common/time/clock.js';
import { requestOrigins } from '../events/request-origins.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { libraryFormValues } from '../provider/library-form.js';
import { pagePolicy, PageTemplates } from './page-templates.js';

type DeviceFlow = NonNullable<NonNullable<Configuration['features']>['deviceFlow']>;

/** Wrong user codes one address may type in a window before its attempts are refused. */
export const MAX_WRONG_USER_CODES = 5;
/** The window wrong user codes are counted in, from the first of them. */
export const WRONG_USER_CODE_WINDOW_MS = 15 * 60 * 1000;
/** The addresses remembered at once: the oldest is forgotten first. */
const TRACKED_ADDRESSES = 10_000;

/** The library's user code page answers under this path (PROVIDER_ROUTES.code_verification). */
const CODE_VERIFICATION_PATH = '/oauth/device';

/** The library's errors for a code that is not one a person may use now (re_render_errors.js). */
const WRONG_CODE_ERRORS = new Set(['NotFoundError', 'ExpiredError', 'AlreadyUsedError']);

/** The policy of the device pages: no script, no style, forms to this origin only. */
const DEVICE_PAGE_POLICY = pagePolicy([]);

interface WrongCodes {
  count: number;
  readonly since: number;
}

/**
 * Keygate's pages for the device authorization grant (RFC 8628), rendered for the library's
 * `features.deviceFlow`: the page where a person types the user code a device shows, the
 * confirmation that names the client (as text) and repeats the code, and the page after consent.
 * Sign-in and consent in between are the hosted pages of every authorization.
 *
 * A user code is short, so guessing one is the attack (RFC 8628 §5.1): an address that typed
 * MAX_WRONG_USER_CODES wrong codes within the window is refused (429) before the library looks
 * a code up. The count is kept by each instance, in memory.
 */
@Injectable()
export class DevicePages {
  private readonly wrongCodes = new Map<string, WrongCodes>();

  constructor(
    private readonly templates: PageTemplates,
    private readonly clock: Clock,
  ) {}

  /** The library's device flow feature, with Keygate's pages. */
  feature(): DeviceFlow {
    return {
      enabled: true,
      // The library's defaults, said here: 8 characters of 20 letters without vowels (no word
      // spelled by accident), about 34 bits (RFC 8628 §6.1).
      charset: 'base-20',
      mask: '****-****',
      userCodeInputSource: (ctx, form, out, err) => {
        this.codePage(ctx, form, out, err);
      },
      userCodeConfirmSource: (ctx, form, client, _deviceInfo, userCode) => {
        const { action, xsrf } = libraryFormValues(form);
        this.render(ctx, 200, 'device-confirm', {
          action,
          xsrf,
          userCode,
          clientName: client.clientName ?? client.clientId,
        });
      },
      successSource: (ctx) => {
        const client = ctx.oidc.client;
        this.render(ctx, 200, 'device-done', {
          clientName: client?.clientName ?? client?.clientId ?? '',
        });
      },
    };
  }

  /**
   * A middleware before the library's routes: refuses the user code form of an address that
   * typed too many wrong codes, and shows Keygate's page for a link carrying the user code
   * (`verification_uri_complete`), where the library would answer a page that posts itself with
   * a script.
   */
  middleware() {
    return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
      const onCodePage = ctx.path === CODE_VERIFICATION_PATH;
      if (onCodePage && ctx.method === 'POST' && this.isThrottled(addressOf(ctx))) {
        this.render(ctx, 429, 'device-code', { error: OAuthServerMessages.deviceCodeThrottled });
        return;
      }
      await next();
      const userCode: unknown = ctx.oidc?.params?.user_code;
      const secret: unknown = (ctx.oidc?.session?.state as { secret?: unknown } | undefined)
        ?.secret;
      if (
        onCodePage &&
        ctx.method === 'GET' &&
        ctx.status === 200 &&
        typeof userCode === 'string' &&
        typeof secret === 'string'
      ) {
        this.render(ctx, 200, 'device-code', {
          action: ctx.oidc.urlFor('code_verification'),
          xsrf: secret,
          userCode,
        });
      }
    };
  }

  private codePage(
    ctx: KoaContextWithOIDC,
    form: string,
    out: ErrorOut | undefined,
    err: Error | undefined,
  ): void {
    const { action, xsrf } = libraryFormValues(form);
    if (err === undefined) {
      this.render(ctx, 200, 'device-code', { action, xsrf });
      return;
    }
    if (WRONG_CODE_ERRORS.has(err.name)) {
      if (ctx.oidc.route === 'code_verification') {
        this.countWrongCode(addressOf(ctx));
      }
      this.render(ctx, 400, 'device-code', {
        action,
        xsrf,
        error: OAuthServerMessages.deviceCodeWrong,
      });
      return;
    }
    if (err.name === 'NoCodeError') {
      this.render(ctx, 400, 'device-code', {
        action,
        xsrf,
        error: OAuthServerMessages.deviceCodeMissing,
      });
      return;
    }
    // Denied on the consent page or cancelled on the confirmation: the device is told
    // access_denied when it polls; the person, that it is over.
    if (err.name === 'AbortedError' || out?.error === 'access_denied') {
      this.render(ctx, 200, 'device-code', { error: OAuthServerMessages.deviceAborted });
      return;
    }
    this.render(ctx, ctx.status >= 400 ? ctx.status : 400, 'device-code', {
      error: OAuthServerMessages.deviceFailed,
    });
  }

  private render(
    ctx: KoaContextWithOIDC,
    status: number,
    page: 'device-code' | 'device-confirm' | 'device-done',
    values: Readonly<Record<string, unknown>>,
  ): void {
    ctx.status = status;
    ctx.set('content-security-policy', DEVICE_PAGE_POLICY);
    ctx.set('referrer-policy', 'no-referrer');
    ctx.set('cache-control', 'no-store');
    ctx.type = 'html';
    ctx.body = this.templates.render(page, values);
  }

  private isThrottled(address: string): boolean {
    const wrong = this.current(address);
    return wrong !== undefined && wrong.count >= MAX_WRONG_USER_CODES;
  }

  private countWrongCode(address: string): void {
    const wrong = this.current(address);
    if (wrong === undefined) {
      setBounded(
        this.wrongCodes,
        address,
        { count: 1, since: this.clock.now().getTime() },
        TRACKED_ADDRESSES,
      );
    } else {
      wrong.count += 1;
    }
  }

  /** The address's wrong codes in the current window, if any. */
  private current(address: string): WrongCodes | undefined {
    const wrong = this.wrongCodes.get(address);
    if (
      wrong !== undefined &&
      this.clock.now().getTime() - wrong.since >= WRONG_USER_CODE_WINDOW_MS
    ) {
      this.wrongCodes.delete(address);
      return undefined;
    }
    return wrong;
  }
}

function addressOf(ctx: KoaContextWithOIDC): string {
  return requestOrigins.get(ctx.req)?.ip ?? UNKNOWN_CLIENT_IP;
}
