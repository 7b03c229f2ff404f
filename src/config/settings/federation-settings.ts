import { isIP } from 'node:net';
import { originOf } from './allowed-origins.js';
import type { EnvironmentVariables } from '../environment-variables.js';

/** One identity provider of Federation__Providers, as read at start-up. */
export interface FederationProviderConfig {
  /** The provider's name in routes (`/api/auth/federation/<id>/…`). */
  readonly id: string;
  /** What people are shown. */
  readonly name: string;
  readonly type: 'oidc' | 'github';
  /** oidc: the issuer whose discovery document names the endpoints; github: the authorization server's origin. */
  readonly issuer: string;
  readonly clientId: string;
  /** Never logged, never echoed. */
  readonly clientSecret: string;
  /** Space-separated scopes asked for. */
  readonly scopes: string;
  /** github only: where people are sent, where codes are exchanged, where `/user` lives. */
  readonly authorizationUrl: string | null;
  readonly tokenUrl: string | null;
  readonly apiUrl: string | null;
}

/** Sign-in through other identity providers; null (off) while Federation__Providers is unset. */
export interface FederationConfig {
  readonly providers: readonly FederationProviderConfig[];
  /** The origin people reach Keygate at; callbacks are `<publicUrl>/api/auth/federation/<id>/callback`. */
  readonly publicUrl: string;
  /** The exact front-end URLs a flow may return to. */
  readonly redirectUrls: readonly string[];
  /** Plain http issuers and endpoints on loopback (development and tests only). */
  readonly allowInsecureIssuers: boolean;
  /** Longest one call to a provider may take. */
  readonly timeoutSeconds: number;
}

const PROVIDER_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;
const PROVIDER_KEYS = new Set([
  'id',
  'name',
  'type',
  'issuer',
  'clientId',
  'clientSecret',
  'scopes',
  'authorizationUrl',
  'tokenUrl',
  'apiUrl',
]);
const GITHUB_ONLY_KEYS = ['authorizationUrl', 'tokenUrl', 'apiUrl'] as const;
const DEFAULT_SCOPES = { oidc: 'openid email profile', github: 'read:user user:email' } as const;
const GITHUB_DEFAULTS = {
  issuer: 'https://github.com',
  authorizationUrl: 'https://github.com/login/oauth/authorize',
  tokenUrl: 'https://github.com/login/oauth/access_token',
  apiUrl: 'https://api.github.com',
} as const;
const MAX_PROVIDERS = 20;

/**
 * Federation__Providers, Federation__PublicUrl, Federation__RedirectUrls and
 * Federation__AllowInsecureIssuers. No providers: off (null), whatever the others say. Every
 * problem names the key and the provider (by position and id), never a value of a secret.
 */
export function checkFederation(env: EnvironmentVariables): {
  federation: FederationConfig | null;
  problems: string[];
} {
  const raw = env.Federation__Providers.trim();
  if (raw === '') {
    return { federation: null, problems: [] };
  }
  const problems: string[] = [];
  const allowInsecure = env.Federation__AllowInsecureIssuers;
  const providers = parseProviders(raw, allowInsecure, problems);
  const publicUrl = originOf(env.Federation__PublicUrl.trim());
  if (env.Federation__PublicUrl.trim() === '') {
    problems.push('Federation__PublicUrl is required with Federation__Providers');
  } else if (publicUrl === null) {
    problems.push(
      `Federation__PublicUrl: "${env.Federation__PublicUrl.trim()}" is not an origin (http or https, a host and an optional port, nothing else)`,
    );
  } else if (!isSecureOrAllowed(new URL(publicUrl), allowInsecure)) {
    problems.push(
      `Federation__PublicUrl: "${publicUrl}" is http, which only Federation__AllowInsecureIssuers allows, on loopback`,
    );
  }
  const redirectUrls = env.Federation__RedirectUrls.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (redirectUrls.length === 0) {
    problems.push('Federation__RedirectUrls is required with Federation__Providers');
  }
  for (const entry of redirectUrls) {
    if (!isRedirectUrl(entry)) {
      problems.push(
        `Federation__RedirectUrls: "${entry}" is not an absolute http or https URL without credentials or fragment`,
      );
    }
  }
  if (problems.length > 0 || publicUrl === null) {
    return { federation: null, problems };
  }
  return {
    federation: {
      providers,
      publicUrl,
      redirectUrls,
      allowInsecureIssuers: allowInsecure,
      timeoutSeconds: env.Federation__TimeoutSeconds,
    },
    problems,
  };
}

function parseProviders(
  raw: string,
  allowInsecure: boolean,
  problems: string[],
): FederationProviderConfig[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // The text may hold secrets: say where it broke, never what it says.
    problems.push('Federation__Providers is not valid JSON (a JSON array of provider objects)');
    return [];
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    problems.push('Federation__Providers must be a non-empty JSON array of provider objects');
    return [];
  }
  if (parsed.length > MAX_PROVIDERS) {
    problems.push(`Federation__Providers lists more than ${MAX_PROVIDERS} providers`);
    return [];
  }
  const providers: FederationProviderConfig[] = [];
  const ids = new Set<string>();
  parsed.forEach((entry: unknown, index) => {
    const provider = parseProvider(entry, index, allowInsecure, problems);
    if (provider === null) {
      return;
    }
    if (ids.has(provider.id)) {
      problems.push(`Federation__Providers: provider ${index + 1} repeats the id "${provider.id}"`);
      return;
    }
    ids.add(provider.id);
    providers.push(provider);
  });
  return providers;
}

function parseProvider(
  entry: unknown,
  index: number,
  allowInsecure: boolean,
  problems: string[],
): FederationProviderConfig | null {
  const at = `Federation__Providers: provider ${index + 1}`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    problems.push(`${at} is not an object`);
    return null;
  }
  const fields = entry as Record<string, unknown>;
  const before = problems.length;
  const unknown = Object.keys(fields).filter((key) => !PROVIDER_KEYS.has(key));
  if (unknown.length > 0) {
    problems.push(`${at} has unknown keys: ${unknown.join(', ')}`);
  }
  const text = (key: string, required: boolean): string | null => {
    const value = fields[key];
    if (value === undefined) {
      if (required) {
        problems.push(`${at} needs "${key}"`);
      }
      return null;
    }
    if (typeof value !== 'string' || value.trim() === '') {
      problems.push(`${at}: "${key}" must be a non-empty string`);
      return null;
    }
    return value.trim();
  };
  const id = text('id', true);
  const named = id === null ? at : `${at} ("${id}")`;
  if (id !== null && !PROVIDER_ID.test(id)) {
    problems.push(
      `${named}: "id" must be 1 to 40 lower-case letters, digits or hyphens, starting with a letter or digit`,
    );
  }
  const name = text('name', true);
  const type = text('type', true);
  if (type !== null && type !== 'oidc' && type !== 'github') {
    problems.push(`${named}: "type" must be "oidc" or "github"`);
  }
  const clientId = text('clientId', true);
  const clientSecret = text('clientSecret', true);
  const scopes = text('scopes', false);
  const url = (key: string, required: boolean): string | null => {
    const value = text(key, required);
    if (value === null) {
      return null;
    }
    const checked = endpointOf(value);
    if (checked === null) {
      problems.push(
        `${named}: "${key}" is not an http or https URL without credentials or fragment`,
      );
      return null;
    }
    if (!isSecureOrAllowed(checked, allowInsecure)) {
      problems.push(
        `${named}: "${key}" is http, which only Federation__AllowInsecureIssuers allows, on loopback`,
      );
      return null;
    }
    return value;
  };
  let issuer: string | null = null;
  let endpoints = { authorizationUrl: null, tokenUrl: null, apiUrl: null } as {
    authorizationUrl: string | null;
    tokenUrl: string | null;
    apiUrl: string | null;
  };
  if (type === 'oidc') {
    issuer = url('issuer', true);
    for (const key of GITHUB_ONLY_KEYS) {
      if (fields[key] !== undefined) {
        problems.push(`${named}: "${key}" is for github providers only`);
      }
    }
  } else if (type === 'github') {
    if (fields.issuer !== undefined) {
      problems.push(`${named}: "issuer" is for oidc providers only`);
    }
    endpoints = {
      authorizationUrl: url('authorizationUrl', false) ?? GITHUB_DEFAULTS.authorizationUrl,
      tokenUrl: url('tokenUrl', false) ?? GITHUB_DEFAULTS.tokenUrl,
      apiUrl: (url('apiUrl', false) ?? GITHUB_DEFAULTS.apiUrl).replace(/\/+$/, ''),
    };
    // GitHub has no issuer: an identity is named by the server that signs people in.
    issuer = new URL(endpoints.authorizationUrl ?? GITHUB_DEFAULTS.authorizationUrl).origin;
  }
  if (
    problems.length > before ||
    id === null ||
    name === null ||
    clientId === null ||
    clientSecret === null ||
    issuer === null ||
    (type !== 'oidc' && type !== 'github')
  ) {
    return null;
  }
  return {
    id,
    name,
    type,
    issuer,
    clientId,
    clientSecret,
    scopes: (scopes ?? DEFAULT_SCOPES[type]).split(/\s+/).join(' '),
    ...endpoints,
  };
}

function endpointOf(value: string): URL | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.hash !== '' ||
    value.includes('#')
  ) {
    return null;
  }
  return url;
}

function isRedirectUrl(value: string): boolean {
  return endpointOf(value) !== null;
}

/** https, or http on a loopback host when insecure issuers are allowed. */
function isSecureOrAllowed(url: URL, allowInsecure: boolean): boolean {
  if (url.protocol === 'https:') {
    return true;
  }
  return allowInsecure && isLoopback(url.hostname);
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return true;
  }
  if (isIP(host) === 4) {
    return host.startsWith('127.');
  }
  return host === '::1';
}
