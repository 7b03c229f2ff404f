import { Injectable, Logger } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { digestOpaqueToken } from '../common/crypto/opaque-token.js';
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
} from '../common/errors/domain-errors.js';
import { RandomSource } from '../common/random/random-source.js';
import { internalOrigin, type RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { INVISIBLE_CHARACTERS, codePointLength } from '../common/validation/string-rules.js';
import type { AdminApiActor } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { OAUTH_CLIENT_NAME_MAX_LENGTH, OAuthClient } from './entities/oauth-client.entity.js';
import { OAuthClientRepository } from './oauth-client.repository.js';
import { OAuthServerMessages } from './oauth-server.messages.js';
import { isRegistrableRedirectUri } from './redirect-uris.js';

/** The scopes an application may ask for, in the order they are stored and shown. */
export const OAUTH_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/**
 * The grants a client may be registered for, in the order they are stored and shown. The
 * authorization code grant brings its refresh tokens (with `offline_access`); the device grant
 * (RFC 8628) and the client credentials grant are served only when their settings are on.
 */
export const OAUTH_GRANT_TYPES = [
  'authorization_code',
  'device_code',
  'client_credentials',
] as const;
export type OAuthGrantType = (typeof OAUTH_GRANT_TYPES)[number];

/** Every client starts so: a leaked secret is recognisable (secret scanners, logs). */
export const OAUTH_CLIENT_SECRET_PREFIX = 'kgcs_';
const CLIENT_SECRET_BYTES = 32;
const CLIENT_SECRET_PATTERN = /^kgcs_[A-Za-z0-9_-]{43}$/;

/** The most redirect URIs of each kind one client may have. */
export const MAX_REDIRECT_URIS = 10;

const CONTROL_CHARACTERS = /[\p{Cc}\p{Zl}\p{Zp}\u202A-\u202E\u2066-\u2069]/u;

/** What an operator gives to register an application. */
export interface NewOAuthClient {
  readonly name: string;
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris?: readonly string[];
  readonly isPublic?: boolean;
  /** Default: every scope of OAUTH_SCOPES. */
  readonly scopes?: readonly string[];
  /** Default: the authorization code grant only. */
  readonly grantTypes?: readonly string[];
}

/**
 * Who changed the clients, for the audit trail: the request (or the CLI), and the admin API key
 * when it was one. Without it the change is recorded with an internal origin.
 */
export interface OAuthClientChange {
  readonly origin: RequestOrigin;
  readonly actor?: AdminApiActor;
}

/** A client as operators see it: never its secret or the digest of it. */
export interface OAuthClientSummary {
  readonly clientId: string;
  readonly name: string;
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris: readonly string[];
  readonly isPublic: boolean;
  readonly scopes: readonly OAuthScope[];
  readonly grantTypes: readonly OAuthGrantType[];
  readonly createdAt: Date;
  /** It registered itself (dynamic client registration): never trusted. */
  readonly isSelfRegistered: boolean;
}

/**
 * A client that registered itself, as the protocol library built it from the admitted request
 * (registration/self-registration-rules.ts decided what it may hold).
 */
export interface SelfRegisteredOAuthClient {
  readonly clientId: string;
  readonly name: string;
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris: readonly string[];
  /** The secret the library returns to the client this once; null for a public client. */
  readonly clientSecret: string | null;
}

/** A client as the provider reads it: with the digest of a confidential client's secret. */
export interface StoredOAuthClient extends OAuthClientSummary {
  readonly secretDigest: string | null;
}

/** A new client, with its secret when it is confidential: shown this once, stored as a digest. */
export interface AddedOAuthClient extends OAuthClientSummary {
  readonly clientSecret: string | null;
}

/**
 * The applications that sign people in with Keygate: registered, listed, removed and given a new
 * secret by operators (the CLI's `oauth-clients:*`, the admin API's `/api/admin/oauth/clients`),
 * read by the provider. A secret is stored only as its digest and checked in constant time.
 */
@Injectable()
export class OAuthClientsService {
  private readonly logger = new Logger(OAuthClientsService.name);

  constructor(
    private readonly clients: OAuthClientRepository,
    private readonly random: RandomSource,
    private readonly clock: Clock,
    private readonly events: AuthEvents,
  ) {}

  async add(input: NewOAuthClient, change?: OAuthClientChange): Promise<AddedOAuthClient> {
    const name = checkedName(input.name);
    const isPublic = input.isPublic === true;
    const grantTypes = checkedGrantTypes(input.grantTypes, isPublic);
    // Only the authorization code grant returns to the application: a device or a service has
    // no redirect URI, and registering one for it would be a way back nobody checks.
    const redirects = grantTypes.includes('authorization_code');
    if (
      !redirects &&
      (input.redirectUris.length > 0 || (input.postLogoutRedirectUris ?? []).length > 0)
    ) {
      throw new InvalidArgumentError(OAuthServerMessages.redirectsWithoutCode);
    }
    const redirectUris = checkedUris(input.redirectUris, redirects);
    const postLogoutRedirectUris = checkedUris(input.postLogoutRedirectUris ?? [], false);
    const scopes = checkedScopes(input.scopes);
    const clientSecret = isPublic ? null : this.newSecret();
    const client: OAuthClient = Object.assign(new OAuthClient(), {
      id: this.random.uuid(),
      name,
      redirectUris: JSON.stringify(redirectUris),
      postLogoutRedirectUris: JSON.stringify(postLogoutRedirectUris),
      isPublic,
      scopes: scopes.join(' '),
      grantTypes: grantTypes.join(' '),
      secretDigest: clientSecret === null ? null : digestOpaqueToken(clientSecret),
      createdAt: this.clock.now(),
      isSelfRegistered: false,
    });
    const { origin, actor } = change ?? this.internalChange();
    await this.clients.insert(client, (m) =>
      this.events.record(
        m,
        { type: 'oauth_client_added', userId: null, clientId: client.id, ...actorField(actor) },
        origin,
      ),
    );
    this.logger.log(`Registered ${isPublic ? 'public' : 'confidential'} OAuth client ${client.id}`);
    return { ...summaryOf(client), clientSecret };
  }

  /**
   * Stores a client that registered itself (RFC 7591), with the digest of its secret, and its
   * `oauth_client_added` event (`selfRegistered: true`) in the same transaction. The rules of
   * what it may register were applied before the library built it; the name and URIs are
   * checked again here, where every client is stored.
   */
  async addSelfRegistered(input: SelfRegisteredOAuthClient, origin: RequestOrigin): Promise<void> {
    const client: OAuthClient = Object.assign(new OAuthClient(), {
      id: input.clientId,
      name: checkedName(input.name),
      redirectUris: JSON.stringify(checkedUris(input.redirectUris, true)),
      postLogoutRedirectUris: JSON.stringify(checkedUris(input.postLogoutRedirectUris, false)),
      isPublic: input.clientSecret === null,
      scopes: OAUTH_SCOPES.join(' '),
      // The code grant only: the device and client credentials grants are an operator's choice.
      grantTypes: 'authorization_code',
      secretDigest: input.clientSecret === null ? null : digestOpaqueToken(input.clientSecret),
      createdAt: this.clock.now(),
      isSelfRegistered: true,
    });
    await this.clients.insert(client, (m) =>
      this.events.record(
        m,
        { type: 'oauth_client_added', userId: null, clientId: client.id, selfRegistered: true },
        origin,
      ),
    );
    this.logger.log(
      `Client ${client.id} registered itself (${client.isPublic ? 'public' : 'confidential'})`,
    );
  }

  /** A new client secret: `kgcs_` and 32 random bytes. Shown once, stored as a digest. */
  newClientSecret(): string {
    return this.newSecret();
  }

  async list(): Promise<OAuthClientSummary[]> {
    return (await this.clients.all()).map(summaryOf);
  }

  /** The client with this id, or null (an unknown or malformed id alike). */
  async find(clientId: string): Promise<OAuthClientSummary | null> {
    const client = await this.clients.byId(clientId);
    return client === null ? null : summaryOf(client);
  }

  /** The client with its secret's digest, for the provider's client authentication; or null. */
  async findStored(clientId: string): Promise<StoredOAuthClient | null> {
    const client = await this.clients.byId(clientId);
    return client === null ? null : { ...summaryOf(client), secretDigest: client.secretDigest };
  }

  async remove(clientId: string, change?: OAuthClientChange): Promise<void> {
    const { origin, actor } = change ?? this.internalChange();
    const removed = await this.clients.delete(clientId, (m) =>
      this.events.record(
        m,
        { type: 'oauth_client_removed', userId: null, clientId, ...actorField(actor) },
        origin,
      ),
    );
    if (!removed) {
      throw new NotFoundError(OAuthServerMessages.unknownClient);
    }
    this.logger.log(`Removed OAuth client ${clientId}`);
  }

  /** A new secret for a confidential client; the old one stops working at once. */
  async rotateSecret(clientId: string): Promise<{ clientId: string; clientSecret: string }> {
    const client = await this.clients.byId(clientId);
    if (client === null) {
      throw new NotFoundError(OAuthServerMessages.unknownClient);
    }
    if (client.isPublic) {
      throw new ConflictError(OAuthServerMessages.publicClientSecret);
    }
    const clientSecret = this.newSecret();
    if (!(await this.clients.replaceSecretDigest(clientId, digestOpaqueToken(clientSecret)))) {
      throw new NotFoundError(OAuthServerMessages.unknownClient);
    }
    this.logger.log(`Rotated the secret of OAuth client ${clientId}`);
    return { clientId, clientSecret };
  }

  /** Whether `secret` is the current secret of the confidential client `clientId`. */
  async verifySecret(clientId: string, secret: string): Promise<boolean> {
    const client = await this.clients.byId(clientId);
    return secretMatchesDigest(secret, client?.secretDigest ?? null);
  }

  private internalChange(): OAuthClientChange {
    return { origin: internalOrigin('oauth-clients', this.random) };
  }

  private newSecret(): string {
    return (
      OAUTH_CLIENT_SECRET_PREFIX + this.random.bytes(CLIENT_SECRET_BYTES).toString('base64url')
    );
  }
}

/**
 * Whether `secret` is the secret whose digest is `secretDigest`, compared in constant time. The
 * digest is computed whatever happens, so an unknown client takes as long as a known one.
 */
export function secretMatchesDigest(secret: string, secretDigest: string | null): boolean {
  const presented = Buffer.from(digestOpaqueToken(secret), 'hex');
  if (secretDigest === null || !CLIENT_SECRET_PATTERN.test(secret)) {
    return false;
  }
  const stored = Buffer.from(secretDigest, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}

function actorField(actor: AdminApiActor | undefined): { actor?: AdminApiActor } {
  return actor === undefined ? {} : { actor };
}

/** Whether `name` may be a client's name: 1 to 100 characters, no control or invisible ones. */
export function isAcceptableClientName(name: string): boolean {
  const trimmed = name.trim();
  return (
    trimmed.length > 0 &&
    codePointLength(trimmed) <= OAUTH_CLIENT_NAME_MAX_LENGTH &&
    !CONTROL_CHARACTERS.test(trimmed) &&
    !INVISIBLE_CHARACTERS.test(trimmed)
  );
}

function checkedName(name: string): string {
  if (!isAcceptableClientName(name)) {
    throw new InvalidArgumentError(OAuthServerMessages.badClientName);
  }
  return name.trim();
}

function checkedUris(uris: readonly string[], required: boolean): string[] {
  if (required && uris.length === 0) {
    throw new InvalidArgumentError(OAuthServerMessages.noRedirectUris);
  }
  if (uris.length > MAX_REDIRECT_URIS) {
    throw new InvalidArgumentError(OAuthServerMessages.tooManyRedirectUris);
  }
  if (!uris.every(isRegistrableRedirectUri)) {
    throw new InvalidArgumentError(OAuthServerMessages.badRedirectUri);
  }
  return [...new Set(uris)];
}

function checkedScopes(scopes: readonly string[] | undefined): OAuthScope[] {
  if (scopes === undefined) {
    return [...OAUTH_SCOPES];
  }
  const asked = new Set(scopes.map((scope) => scope.trim()).filter((scope) => scope !== ''));
  if (asked.size === 0 || [...asked].some((scope) => !isOAuthScope(scope))) {
    throw new InvalidArgumentError(OAuthServerMessages.unknownScopes);
  }
  return OAUTH_SCOPES.filter((scope) => asked.has(scope));
}

function checkedGrantTypes(
  grantTypes: readonly string[] | undefined,
  isPublic: boolean,
): OAuthGrantType[] {
  if (grantTypes === undefined) {
    return ['authorization_code'];
  }
  const asked = new Set(grantTypes.map((grantType) => grantType.trim()).filter((g) => g !== ''));
  if (asked.size === 0 || [...asked].some((grantType) => !isOAuthGrantType(grantType))) {
    throw new InvalidArgumentError(OAuthServerMessages.unknownGrantTypes);
  }
  // RFC 6749 §4.4: the client credentials grant is for confidential clients only; a public
  // client has no credentials to present.
  if (isPublic && asked.has('client_credentials')) {
    throw new InvalidArgumentError(OAuthServerMessages.publicClientGrant);
  }
  return OAUTH_GRANT_TYPES.filter((grantType) => asked.has(grantType));
}

function isOAuthGrantType(value: string): value is OAuthGrantType {
  return (OAUTH_GRANT_TYPES as readonly string[]).includes(value);
}

function isOAuthScope(value: string): value is OAuthScope {
  return (OAUTH_SCOPES as readonly string[]).includes(value);
}

function summaryOf(client: OAuthClient): OAuthClientSummary {
  return {
    clientId: client.id,
    name: client.name,
    redirectUris: parseList(client.redirectUris),
    postLogoutRedirectUris: parseList(client.postLogoutRedirectUris),
    isPublic: client.isPublic,
    scopes: client.scopes.split(' ').filter(isOAuthScope),
    grantTypes: client.grantTypes.split(' ').filter(isOAuthGrantType),
    createdAt: client.createdAt,
    isSelfRegistered: client.isSelfRegistered,
  };
}

function parseList(json: string): string[] {
  const value: unknown = JSON.parse(json);
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : [];
}
