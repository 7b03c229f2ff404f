import { createServer } from 'node:net';
import {
  OAuthClientsService,
  type AddedOAuthClient,
  type NewOAuthClient,
} from '../../src/oauth-server/oauth-clients.service.js';
import type { TestApp, TestAppOptions } from './create-test-app.js';
import { asymmetricSigning } from './signing-keys.js';

/** A loopback port free a moment ago: the issuer must name the port before the app listens. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The options of an app that is an OpenID provider whose issuer is its own loopback address. */
export async function providerAppOptions(
  algorithm = 'ES256',
  extra: Readonly<Record<string, string>> = {},
): Promise<TestAppOptions> {
  const port = await freePort();
  return {
    port,
    environment: asymmetricSigning(algorithm, {
      OAuthServer__Enabled: 'true',
      OAuthServer__Issuer: `http://127.0.0.1:${port}`,
      ...extra,
    }),
  };
}

/** Registers a client as an operator would. */
export function registerClient(t: TestApp, client: NewOAuthClient): Promise<AddedOAuthClient> {
  return t.app.get(OAuthClientsService).add(client);
}

/** One answer as the test browser saw it. */
export interface BrowserAnswer {
  readonly status: number;
  readonly url: URL;
  readonly headers: Headers;
  readonly text: string;
}

/**
 * A person's browser in plain HTTP: a cookie jar (by name; paths and expiry are not needed by
 * these tests), manual redirects, and forms posted as a browser posts them.
 */
export class TestBrowser {
  private readonly jar = new Map<string, string>();

  async open(url: URL | string, init: RequestInit = {}): Promise<BrowserAnswer> {
    const target = new URL(url);
    const cookie = [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(target, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        ...(cookie === '' ? {} : { cookie }),
      },
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const index = pair.indexOf('=');
      const value = pair.slice(index + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(header)) {
        this.jar.delete(pair.slice(0, index));
      } else {
        this.jar.set(pair.slice(0, index), value);
      }
    }
    return {
      status: response.status,
      url: target,
      headers: response.headers,
      text: await response.text(),
    };
  }

  /** Follows redirects from `url` until an answer is not one, or points at `stopAt`. */
  async follow(url: URL | string, stopAt: string): Promise<BrowserAnswer> {
    let answer = await this.open(url);
    for (let hop = 0; hop < 20; hop++) {
      const location = answer.headers.get('location');
      if (location === null || ![302, 303, 307].includes(answer.status)) {
        return answer;
      }
      const next = new URL(location, answer.url);
      if (next.href.startsWith(stopAt)) {
        return { ...answer, url: next };
      }
      answer = await this.open(next);
    }
    throw new Error('too many redirects');
  }

  /**
   * Posts the page's first form (its action, its hidden csrf) with `fields`, then follows
   * redirects; `action`: the form, or the button's `formaction`, whose address ends so.
   */
  async submit(
    page: BrowserAnswer,
    fields: Record<string, string>,
    stopAt: string,
    options: { csrf?: string | null; action?: string } = {},
  ): Promise<BrowserAnswer> {
    const actions = [
      ...page.text.matchAll(/(?:<form\b[^>]*?\saction|\sformaction)="([^"]+)"/g),
    ].map((match) => match[1]);
    const action =
      options.action === undefined
        ? actions[0]
        : actions.find((candidate) => decodeEntities(candidate).endsWith(options.action ?? ''));
    if (action === undefined) {
      throw new Error(`no form on the page: ${page.text}`);
    }
    // Every hidden field of the page, as a browser sends them; `csrf` as the test says.
    const hidden = Object.fromEntries(
      [...page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
        (match) => [match[1], decodeEntities(match[2])],
      ),
    );
    if (options.csrf === null) {
      delete hidden.csrf;
    } else if (options.csrf !== undefined) {
      hidden.csrf = options.csrf;
    }
    const body = new URLSearchParams({ ...hidden, ...fields });
    const posted = await this.open(new URL(decodeEntities(action), page.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
    const location = posted.headers.get('location');
    if (location === null) {
      return posted;
    }
    const next = new URL(location, posted.url);
    return next.href.startsWith(stopAt) ? { ...posted, url: next } : this.follow(next, stopAt);
  }
}

export function csrfOf(html: string): string {
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (csrf === undefined) {
    throw new Error('no csrf field on the page');
  }
  return csrf;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#x2F;/g, '/')
    .replace(/&#x3D;/g, '=')
    .replace(/&amp;/g, '&');
}
