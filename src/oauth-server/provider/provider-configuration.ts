import type { AsymmetricSigningAlgorithm, Configuration, JWK } from 'oidc-provider';
import type { OAuthServerConfig } from '../../config/settings/oauth-server-settings.js';
import { OAUTH_SCOPES } from '../oauth-clients.service.js';
import { pagePolicy } from '../pages/page-templates.js';
import { guardedFetch, FETCH_READ_LIMIT_BYTES } from '../client-metadata/guarded-fetch.js';
import {
  METADATA_DOCUMENT_LIMIT_BYTES,
  metadataDocumentFeature,
} from '../client-metadata/metadata-document-feature.js';
import {
  registrationFeature,
  type RegistrationParts,
} from '../registration/registration-feature.js';
import { corsForAgents } from './agent-cors.js';
import { resourceIndicators } from './resource-indicators.js';
import { libraryFormValues } from './library-form.js';

/** Where each endpoint is: under /oauth/, with the keys where Keygate already publishes them. */
export const PROVIDER_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  userinfo: '/oauth/userinfo',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  end_session: '/oauth/logout',
  registration: '/oauth/register',
  // Served by Keygate's own JWKS route (src/keys), which publishes the next, current and previous
  // keys: the provider only needs the address for its discovery document.
  jwks: '/.well-known/jwks.json',
  // RFC 8628, when OAuthServer__DeviceFlow is on: the device's request, and the page where a
  // person types the user code (its `verification_uri`).
  device_authorization: '/oauth/device/auth',
  code_verification: '/oauth/device',
} as const;

/** Where the provider sends a person to sign in or consent: Keygate's hosted pages. */
export const INTERACTION_PATH = '/oauth/interaction';

/** What the provider needs from the rest of Keygate, besides its settings. */
export interface ProviderParts {
  readonly settings: OAuthServerConfig;
  /** The private JWK of the key that signs, with its `kid` and `alg`. */
  readonly signingKey: JWK & { kid: string; alg: AsymmetricSigningAlgorithm };
  readonly cookieKeys: readonly string[];
  readonly clockToleranceSeconds: number;
  readonly adapter: NonNullable<Configuration['adapter']>;
  readonly findAccount: NonNullable<Configuration['findAccount']>;
  /** The page of a request refused before any interaction (`error` is the OAuth error code). */
  readonly errorPage: (error: string) => string;
  /** RP-initiated logout's confirmation page: the library's form's action and token. */
  readonly logoutPage: (form: { action: string; xsrf: string; clientName: string }) => string;
  /** The page after a logout that names no return address. */
  readonly loggedOutPage: () => string;
  /** The grant of the person's remembered consent to the client, if any (OAuthGrantsService). */
  readonly rememberedGrantId: (accountId: string, clientId: string) => Promise<string | undefined>;
  /** When the provider asks the person to sign in (the library's, and Keygate's own checks). */
  readonly policy: NonNullable<NonNullable<Configuration['interactions']>['policy']>;
  /** The library's `invalid_target` error (RFC 8707), for the resource rules. */
  readonly invalidTarget: (description: string) => Error;
  /** Dynamic client registration (OAuthServer__DynamicRegistration). */
  readonly registration: Omit<RegistrationParts, 'mode' | 'idTokenAlgorithm'>;
  /**
   * Whether the client registered itself (dynamic registration or a metadata document): its
   * consent is never taken as given.
   */
  readonly isSelfRegistered: (client: { readonly clientId: string }) => Promise<boolean>;
  /** The device flow feature with Keygate's pages (DevicePages), used when it is on. */
  readonly deviceFlow: NonNullable<NonNullable<Configuration['features']>['deviceFlow']>;
}

/** The policy of the pages the library renders with Keygate's templates (see pagePolicy). */
const LIBRARY_PAGE_POLICY = pagePolicy([]);

const MINUTE = 60;
const DAY = 24 * 60 * MINUTE;

/**
 * The library's configuration: OpenID Connect on OAuth 2.1 with the authorization code flow (and,
 * each when its setting is on, the device and client credentials grants),
 * PKCE (S256, the only method the library knows) required for public clients, refresh tokens
 * rotated at every use, revocation, introspection (confidential clients, their own tokens),
 * RP-initiated logout, and the four scopes; dynamic registration and client metadata documents
 * when their settings say so. Nothing else is switched on: no implicit or hybrid flow, no pushed
 * requests, no HMAC-signed anything (a client secret is stored only as a digest, so it cannot be a
 * key).
 */
export function providerConfiguration(parts: ProviderParts): Configuration {
  const { settings, signingKey } = parts;
  const secureCookies = new URL(settings.issuer).protocol === 'https:';
  const refreshSeconds = settings.refreshTokenDays * DAY;
  return {
    adapter: parts.adapter,
    findAccount: parts.findAccount,
    jwks: { keys: [signingKey] },
    routes: PROVIDER_ROUTES,
    scopes: [...OAUTH_SCOPES],
    claims: {
      // `amr` with `openid`: every ID token says how the person signed in (`pwd`, `otp`, ...,
      // as Keygate's own access tokens do); UserInfo has no such claim to give.
      openid: ['sub', 'amr'],
      profile: ['name', 'preferred_username'],
      email: ['email', 'email_verified'],
    },
    responseTypes: ['code'],
    clientAuthMethods: ['client_secret_basic', 'none'],
    // What a client that registered itself gets for what it leaves out: ID tokens signed with
    // Keygate's key (the only algorithm enabled), the code flow.
    clientDefaults: {
      grant_types: ['authorization_code'],
      id_token_signed_response_alg: signingKey.alg,
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    // Every document the library fetches (client metadata documents) goes through Keygate's
    // outbound-call guard, never the library's own dispatcher.
    fetch: guardedFetch(settings.allowPrivateFetch),
    fetchResponseBodyLimits: {
      'client_id metadata document': METADATA_DOCUMENT_LIMIT_BYTES,
      jwks_uri: FETCH_READ_LIMIT_BYTES,
      sector_identifier_uri: FETCH_READ_LIMIT_BYTES,
    },
    enabledJWA: {
      idTokenSigningAlgValues: [signingKey.alg],
      userinfoSigningAlgValues: [signingKey.alg],
      introspectionSigningAlgValues: [signingKey.alg],
      authorizationSigningAlgValues: [signingKey.alg],
      clientAuthSigningAlgValues: [],
      requestObjectSigningAlgValues: [],
    },
    clientBasedCORS: corsForAgents,
    pkce: { required: (_ctx, client) => client.clientAuthMethod === 'none' },
    rotateRefreshToken: true,
    allowOmittingSingleRegisteredRedirectUri: false,
    clockTolerance: parts.clockToleranceSeconds,
    cookies: {
      keys: [...parts.cookieKeys],
      long: { httpOnly: true, sameSite: 'lax', secure: secureCookies },
      short: { httpOnly: true, sameSite: 'lax', secure: secureCookies },
    },
    ttl: {
      // A resource's token lives as that resource says (OAuthServer__Resources).
      AccessToken: (_ctx, token) =>
        token.resourceServer?.accessTokenTTL ?? settings.accessTokenMinutes * MINUTE,
      ClientCredentials: (_ctx, token) =>
        token.resourceServer?.accessTokenTTL ?? settings.accessTokenMinutes * MINUTE,
      // RFC 8628 §3.2: long enough to find the page and sign in, short for a guessed code.
      DeviceCode: 10 * MINUTE,
      AuthorizationCode: MINUTE,
      IdToken: settings.accessTokenMinutes * MINUTE,
      Interaction: 30 * MINUTE,
      Grant: refreshSeconds,
      RefreshToken: refreshSeconds,
      Session: refreshSeconds,
    },
    // An error the library cannot send back to the client (an unknown client, a redirect URI
    // that is not registered) is shown to the person, never redirected.
    renderError: (ctx, out) => {
      ctx.set('content-security-policy', LIBRARY_PAGE_POLICY);
      ctx.type = 'html';
      ctx.body = parts.errorPage(String(out.error));
    },
    // Consent is remembered per person and client beyond the browser session: the grant of this
    // consent (the interaction's), else the browser session's, else the remembered one.
    loadExistingGrant: async (ctx) => {
      const { client, session, result, provider } = ctx.oidc;
      if (client === undefined || session?.accountId === undefined) {
        return undefined;
      }
      const consented = (result?.consent as { grantId?: string } | undefined)?.grantId;
      // A client that registered itself is never trusted: only the consent just given counts,
      // so the person is asked at every authorization.
      const grantId =
        consented ??
        ((await parts.isSelfRegistered(client))
          ? undefined
          : (session.grantIdFor(client.clientId) ??
            (await parts.rememberedGrantId(session.accountId, client.clientId))));
      if (grantId === undefined) {
        return undefined;
      }
      const grant = await provider.Grant.find(grantId);
      return grant?.accountId === session.accountId && grant.clientId === client.clientId
        ? grant
        : undefined;
    },
    interactions: {
      url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`,
      policy: parts.policy,
    },
    features: {
      devInteractions: { enabled: false },
      deviceFlow: settings.deviceFlow ? parts.deviceFlow : { enabled: false },
      clientCredentials: { enabled: settings.clientCredentials },
      pushedAuthorizationRequests: { enabled: false },
      revocation: { enabled: true },
      registration: registrationFeature({
        ...parts.registration,
        mode: settings.dynamicRegistration,
        idTokenAlgorithm: signingKey.alg,
      }),
      clientIdMetadataDocument: metadataDocumentFeature(settings.clientIdMetadataDocuments),
      resourceIndicators: resourceIndicators({
        resources: settings.resources,
        requireResource: settings.requireResource,
        signingAlgorithm: signingKey.alg,
        invalidTarget: parts.invalidTarget,
      }),
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx, form) => {
          ctx.set('content-security-policy', LIBRARY_PAGE_POLICY);
          ctx.type = 'html';
          ctx.body = parts.logoutPage({
            ...libraryFormValues(form),
            clientName: ctx.oidc.client?.clientName ?? '',
          });
        },
        postLogoutSuccessSource: (ctx) => {
          ctx.set('content-security-policy', LIBRARY_PAGE_POLICY);
          ctx.type = 'html';
          ctx.body = parts.loggedOutPage();
        },
      },
      introspection: {
        enabled: true,
        // RFC 7662 §4: only confidential clients, and only about their own tokens.
        allowedPolicy: (_ctx, client, token) =>
          client.clientAuthMethod !== 'none' && token.clientId === client.clientId,
      },
    },
  };
}
