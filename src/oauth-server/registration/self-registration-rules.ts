import { isLoopbackHost } from '../../config/settings/oauth-server-settings.js';
import {
  isAcceptableClientName,
  MAX_REDIRECT_URIS,
  OAUTH_SCOPES,
} from '../oauth-clients.service.js';
import { isRegistrableRedirectUri } from '../redirect-uris.js';

/** The most members any list in a registration (or a metadata document) may have. */
export const MAX_METADATA_LIST_LENGTH = MAX_REDIRECT_URIS;

/** The grants and response types a self-registered client may have: the code flow's. */
const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);
const RESPONSE_TYPES = new Set(['code']);
const AUTH_METHODS = new Set(['none', 'client_secret_basic']);

/**
 * Why a registration is refused, as RFC 7591 §3.2.2 names it. The description of an
 * `invalid_redirect_uri` starts with `redirect_uris`, and only its does (the library's error
 * derives the code from it).
 */
export interface RegistrationRefusal {
  readonly error: 'invalid_redirect_uri' | 'invalid_client_metadata';
  readonly description: string;
}

/** What Keygate keeps of an admitted registration, in RFC 7591 names. */
export interface AdmittedMetadata {
  readonly application_type: 'web' | 'native';
  readonly client_name: string;
  readonly redirect_uris: readonly string[];
  readonly post_logout_redirect_uris: readonly string[];
  readonly token_endpoint_auth_method: 'none' | 'client_secret_basic';
  readonly grant_types: readonly string[];
  readonly response_types: readonly string[];
  readonly scope: string;
}

export type Admission =
  | { readonly isAdmitted: true; readonly metadata: AdmittedMetadata }
  | { readonly isAdmitted: false; readonly refusal: RegistrationRefusal };

/**
 * The one place that decides what a client that registers itself may hold, for dynamic
 * registration (RFC 7591) and for client metadata documents alike:
 *
 * - its redirect URIs: one to ten; a web client's only `https:`; a native client's `http:` on
 *   loopback (any port, RFC 8252 §7.3), `https:` or a private-use scheme with a dot; never
 *   `javascript:`, `data:`, `file:` or any other scheme;
 * - without `application_type`, a client whose redirect URIs are all on loopback is native
 *   (deployed MCP clients, the official SDK's among them, omit the field);
 * - a native client is public (RFC 8252 §8.4): a request for a secret is replaced by `none`;
 * - the code flow only (`authorization_code`, `refresh_token`, `code`); `none` or
 *   `client_secret_basic`;
 * - no list longer than ten members.
 *
 * What it keeps is only what the table stores: the library answers with it, so the answer is
 * what was registered (RFC 7591 §3.2.1 lets the server replace what it does not keep).
 */
export function admitSelfRegistration(body: Readonly<Record<string, unknown>>): Admission {
  for (const [field, value] of Object.entries(body)) {
    if (Array.isArray(value) && value.length > MAX_METADATA_LIST_LENGTH) {
      return refuse(
        field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata',
        `${field} has more than ${MAX_METADATA_LIST_LENGTH} members`,
      );
    }
  }
  const redirectUris = stringList(body.redirect_uris);
  if (redirectUris === null || redirectUris.length === 0) {
    return refuse('invalid_redirect_uri', 'redirect_uris must be a non-empty array of strings');
  }
  const postLogoutRedirectUris = stringList(body.post_logout_redirect_uris ?? []);
  if (postLogoutRedirectUris === null) {
    return refuse(
      'invalid_client_metadata',
      'post_logout_redirect_uris must be an array of strings',
    );
  }
  const asked = body.application_type;
  if (asked !== undefined && asked !== 'web' && asked !== 'native') {
    return refuse('invalid_client_metadata', 'application_type must be web or native');
  }
  const applicationType = asked ?? (redirectUris.every(isLoopbackRedirectUri) ? 'native' : 'web');
  const allowed = applicationType === 'web' ? isWebRedirectUri : isRegistrableRedirectUri;
  if (!redirectUris.every(allowed)) {
    return refuse(
      'invalid_redirect_uri',
      applicationType === 'web'
        ? 'redirect_uris of a web client must all be https URIs'
        : 'redirect_uris of a native client must be http loopback, https or private-use scheme URIs',
    );
  }
  if (!postLogoutRedirectUris.every(allowed)) {
    return refuse(
      'invalid_client_metadata',
      'post_logout_redirect_uris are not allowed for this client',
    );
  }
  const authMethod = body.token_endpoint_auth_method ?? 'client_secret_basic';
  if (typeof authMethod !== 'string' || !AUTH_METHODS.has(authMethod)) {
    return refuse(
      'invalid_client_metadata',
      'token_endpoint_auth_method must be none or client_secret_basic',
    );
  }
  if (
    !isSubsetOf(body.grant_types, GRANT_TYPES) ||
    !isSubsetOf(body.response_types, RESPONSE_TYPES)
  ) {
    return refuse(
      'invalid_client_metadata',
      'only the authorization code flow (and refresh tokens) may be registered',
    );
  }
  const name = body.client_name ?? hostOf(redirectUris[0]);
  if (typeof name !== 'string' || !isAcceptableClientName(name)) {
    return refuse(
      'invalid_client_metadata',
      'client_name must be 1 to 100 characters, without control or invisible characters',
    );
  }
  return {
    isAdmitted: true,
    metadata: {
      application_type: applicationType,
      client_name: name.trim(),
      redirect_uris: [...new Set(redirectUris)],
      post_logout_redirect_uris: [...new Set(postLogoutRedirectUris)],
      token_endpoint_auth_method:
        applicationType === 'native'
          ? 'none'
          : (authMethod as AdmittedMetadata['token_endpoint_auth_method']),
      grant_types: [...GRANT_TYPES],
      response_types: [...RESPONSE_TYPES],
      scope: OAUTH_SCOPES.join(' '),
    },
  };
}

/** `http:` on a loopback host (localhost, 127.0.0.0/8, [::1]): where a native client listens. */
export function isLoopbackRedirectUri(uri: string): boolean {
  const url = URL.parse(uri);
  return url !== null && url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

function isWebRedirectUri(uri: string): boolean {
  return isRegistrableRedirectUri(uri) && URL.parse(uri)?.protocol === 'https:';
}

/** What a client without a name is called: the host its first redirect URI returns to. */
function hostOf(uri: string): string {
  const url = URL.parse(uri);
  return url === null ? '' : url.host === '' ? url.protocol : url.host;
}

function stringList(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : null;
}

function isSubsetOf(value: unknown, allowed: ReadonlySet<string>): boolean {
  if (value === undefined) {
    return true;
  }
  const list = stringList(value);
  return list !== null && list.every((item) => allowed.has(item));
}

function refuse(error: RegistrationRefusal['error'], description: string): Admission {
  return { isAdmitted: false, refusal: { error, description } };
}

/**
 * Whether a client built from a client metadata document may be used: the same redirect URI
 * rule as a registration's (`https:`, `http:` on loopback, a private-use scheme with a dot; one
 * to ten), for its post-logout URIs too, and public (`none`): a document cannot hold a secret.
 * The library has already checked that the document's `client_id` is its URL.
 */
export function isAcceptableMetadataDocumentClient(client: {
  readonly redirectUris?: readonly string[];
  readonly postLogoutRedirectUris?: readonly string[];
  readonly clientAuthMethod?: string;
}): boolean {
  const redirectUris = client.redirectUris ?? [];
  const postLogoutRedirectUris = client.postLogoutRedirectUris ?? [];
  return (
    client.clientAuthMethod === 'none' &&
    redirectUris.length > 0 &&
    redirectUris.length <= MAX_METADATA_LIST_LENGTH &&
    postLogoutRedirectUris.length <= MAX_METADATA_LIST_LENGTH &&
    [...redirectUris, ...postLogoutRedirectUris].every(isRegistrableRedirectUri)
  );
}
