// @keygate/client: Keygate's session for a browser page (every tab of an origin) or a Node
// process. One file with no imports at run time, so that a page can load the built
// dist/keygate-client.js as it is, without a bundler.
import type { components } from './openapi.js';

type Schemas = components['schemas'];

export type AuthResponse = Schemas['AuthResponseDto'];
export type PublicUser = Schemas['UserResponseDto'];
export type MessageResponse = Schemas['MessageResponseDto'];
export type RegisterBody = Schemas['RegisterDto'];
export type LoginBody = Schemas['LoginDto'];
export type ChangePasswordBody = Schemas['ChangePasswordDto'];
export type ForgotPasswordBody = Schemas['ForgotPasswordDto'];
export type ResetPasswordBody = Schemas['ResetPasswordDto'];
export type VerifyEmailBody = Schemas['VerifyEmailDto'];
export type ChangeEmailBody = Schemas['ChangeEmailDto'];
export type DeleteAccountBody = Schemas['DeleteAccountDto'];
export type EnrollTotpBody = Schemas['EnrollTotpDto'];
export type TotpEnrolment = Schemas['TotpEnrolmentResponseDto'];
export type TotpCodeBody = Schemas['TotpCodeDto'];
export type RecoveryCodes = Schemas['RecoveryCodesResponseDto'];
export type DisableTotpBody = Schemas['DisableTotpDto'];
export type FederationProvider = Schemas['ProviderSummaryDto'];
export type FederationProviderList = Schemas['ProvidersResponseDto'];
export type FederationTokenBody = Schemas['FederationTokenDto'];
export type LinkedIdentity = Schemas['IdentityResponseDto'];
export type LinkedIdentityList = Schemas['IdentitiesResponseDto'];
export type LinkProviderBody = Schemas['LinkIdentityDto'];
export type LinkProviderResponse = Schemas['LinkResponseDto'];
/**
 * The `error` a flow comes back with (docs/federation.md lists them), and `flow_not_found`, the
 * client's own: a `code` arrived in a tab that holds no verifier for it (the flow was started in
 * another tab, or this tab's sessionStorage was cleared), so it was not sent.
 */
export type FederationErrorCode =
  | 'access_denied'
  | 'provider_error'
  | 'provider_unavailable'
  | 'flow_expired'
  | 'provider_mismatch'
  | 'email_not_verified'
  | 'account_not_linked'
  | 'account_disabled'
  | 'account_locked'
  | 'identity_in_use'
  | 'flow_not_found'
  // A code a newer Keygate may add, passed on as it came.
  | (string & {});
export type SessionList = Schemas['SessionListResponseDto'];
export type RevokedSessions = Schemas['RevokedSessionsResponseDto'];
/** `keepCurrent: true` keeps this client's session; the client adds its refresh token. */
export type RevokeAllSessionsBody = Pick<Schemas['RevokeAllSessionsDto'], 'keepCurrent'>;
export type Passkey = Schemas['PasskeyResponseDto'];
export type PasskeyList = Schemas['PasskeyListResponseDto'];
export type RenamePasskeyBody = Schemas['RenamePasskeyDto'];
export type PasskeyCreationOptions = Schemas['PasskeyCreationOptionsResponseDto'];
export type PasskeyRequestOptions = Schemas['PasskeyRequestOptionsResponseDto'];
/** The browser's answer to creation options, in its JSON form (`credential.toJSON()`). */
export type PasskeyRegistration = Schemas['RegistrationResponseDto'];
/** The browser's answer to request options, in its JSON form (`credential.toJSON()`). */
export type PasskeyAssertion = Schemas['AuthenticationResponseDto'];
/**
 * The login's body; `passkey: true` answers a second factor with one of the account's passkeys
 * (the browser asks the person) when, and only when, Keygate says the account needs one.
 */
export type LoginRequest = Omit<LoginBody, 'passkey'> & {
  readonly passkey?: LoginBody['passkey'] | true;
};
/**
 * Adding a passkey asks for a recent proof: the password, or (`passkey: true`) an assertion of
 * one of the account's passkeys, which the browser asks the person for first.
 */
export type RegisterPasskeyOptions = (
  { readonly password: string } | { readonly passkey: true }
) & {
  /** What the list shows; Keygate names it `Llave de acceso` without one. */
  readonly name?: string | null;
  /** Aborts the browser's dialog. */
  readonly signal?: AbortSignal;
};
export interface SignInWithPasskeyOptions {
  /** `'conditional'` offers the passkeys in the autofill of a field with `autocomplete="username webauthn"`. */
  readonly mediation?: 'conditional' | 'optional' | 'required' | 'silent';
  /** Aborts the browser's request: needed before a modal sign-in replaces a conditional one. */
  readonly signal?: AbortSignal;
}

export interface SignInWithOptions {
  /** Where the flow comes back to: one of Keygate's `Federation__RedirectUrls`, exactly. */
  readonly redirectTo: string;
}

export interface LinkProviderOptions {
  /** Where the flow comes back to: one of Keygate's `Federation__RedirectUrls`, exactly. */
  readonly redirectTo: string;
  /** The account's current password, the proof of presence Keygate asks for. */
  readonly password: string;
}

/**
 * The second factor for `completeSignIn()`, given after it answered `second-factor-required`
 * (or at once, as `login()` takes `code`): the app's six digits or a recovery code, or
 * `passkey: true` to answer it with one of the account's passkeys (the browser asks the person).
 */
export interface CompleteSignInOptions {
  readonly secondFactorCode?: string;
  readonly passkey?: true;
}

/** What `completeSignIn()` found in the address bar, and what came of it. */
export type CompleteSignInResult =
  /** Signed in: the session is kept as after `login()`. */
  | { readonly status: 'signed-in'; readonly response: AuthResponse }
  /**
   * The account has a second factor: ask the person for it and call
   * `completeSignIn({ secondFactorCode })` (or `{ passkey: true }`) while the code lives.
   */
  | { readonly status: 'second-factor-required' }
  /** A `linkProvider()` flow ended: the identity at `provider` is linked to the account. */
  | { readonly status: 'linked'; readonly provider: string }
  /** The flow came back refused; `error` is its machine code. */
  | { readonly status: 'error'; readonly error: FederationErrorCode }
  /** Nothing to complete: the page was not opened by a flow's return. */
  | { readonly status: 'none' };

/** A place for the session: `Storage`'s three methods, synchronous or not. */
export interface KeygateStorage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/** What `onChange` listeners are told: the signed-in person, or null once the session ended. */
export type SessionState = { readonly user: PublicUser; readonly accessTokenExpiry: string } | null;

/** How tabs take turns at refreshing. Only tests of this library choose. */
export type Coordination = 'web-locks' | 'indexeddb-lease' | 'none';

export interface KeygateClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export type FetchFunction = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

export interface KeygateClientOptions {
  /** Keygate's address, such as `https://id.example.com` (no trailing `/api`). */
  readonly baseUrl: string;
  /**
   * Where the session lives: `'memory'` (this tab only, gone on reload: the default),
   * `'local'` (every tab of the origin, kept across reloads), `'session'` (this tab and the
   * tabs duplicated from it, kept across reloads), or a storage of your own (shared, like
   * `'local'`).
   */
  readonly storage?: 'memory' | 'local' | 'session' | KeygateStorage;
  /** Names the storage key, the lock, the channel and the database; change it only to run two clients on one origin. */
  readonly name?: string;
  /** The `fetch` to call Keygate with; the global one by default. */
  readonly fetch?: FetchFunction;
  /**
   * How `signInWith()` and `linkProvider()` send the browser to Keygate and the provider (a
   * full-page navigation); `location.assign` by default.
   */
  readonly navigate?: (url: string) => void;
  /** For tests of this library: a fake clock and random source, and the cross-tab switch. */
  readonly testOnly?: {
    readonly clock?: KeygateClock;
    readonly random?: () => number;
    readonly coordination?: Coordination;
  };
}

export interface KeygateClient {
  register(body: RegisterBody): Promise<AuthResponse>;
  /**
   * With `code` for an account that has a second factor (see KeygateError.codeRequired), or
   * `passkey: true` to answer it with a passkey when Keygate asks for it.
   */
  login(body: LoginRequest): Promise<AuthResponse>;
  logout(): Promise<void>;
  me(): Promise<PublicUser>;
  /** A new pair now: rotated by this tab, or the one another tab obtained meanwhile. */
  refresh(): Promise<AuthResponse>;
  /** A valid access token (refreshed shortly before expiry), or null without a session. */
  getAccessToken(): Promise<string | null>;
  /** `fetch` with the bearer token; on a 401, refreshes once and retries once. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Told when the session starts, changes or ends; returns the unsubscribe. */
  onChange(listener: (state: SessionState) => void): () => void;
  changePassword(body: ChangePasswordBody): Promise<MessageResponse>;
  forgotPassword(body: ForgotPasswordBody): Promise<MessageResponse>;
  resetPassword(body: ResetPasswordBody): Promise<MessageResponse>;
  verifyEmail(body: VerifyEmailBody): Promise<MessageResponse>;
  resendVerification(): Promise<MessageResponse>;
  changeEmail(body: ChangeEmailBody): Promise<MessageResponse>;
  deleteAccount(body: DeleteAccountBody): Promise<MessageResponse>;
  listSessions(): Promise<SessionList>;
  revokeAllSessions(body?: RevokeAllSessionsBody): Promise<RevokedSessions>;
  enrollTotp(body: EnrollTotpBody): Promise<TotpEnrolment>;
  confirmTotp(body: TotpCodeBody): Promise<RecoveryCodes>;
  replaceRecoveryCodes(body: TotpCodeBody): Promise<RecoveryCodes>;
  disableTotp(body: DisableTotpBody): Promise<MessageResponse>;
  /**
   * Adds a passkey to the signed-in account: Keygate's creation options, the browser's dialog
   * (`navigator.credentials.create`), Keygate's check. The browser's refusals (`NotAllowedError`
   * when the person cancels, `InvalidStateError` when the authenticator already holds one for
   * the account) are thrown as the browser threw them.
   */
  registerPasskey(options: RegisterPasskeyOptions): Promise<Passkey>;
  /** Signs in with a passkey alone, and keeps the session as `login()` does. */
  signInWithPasskey(options?: SignInWithPasskeyOptions): Promise<AuthResponse>;
  listPasskeys(): Promise<PasskeyList>;
  renamePasskey(id: string, body: RenamePasskeyBody): Promise<Passkey>;
  removePasskey(id: string): Promise<void>;
  /** The providers to show buttons for: `GET /api/auth/federation/providers`. */
  providers(): Promise<FederationProviderList>;
  /**
   * Starts a sign-in at another identity provider: makes a PKCE pair, keeps the verifier in
   * this tab's sessionStorage and sends the browser (a full-page navigation) to Keygate's
   * authorize route, which sends it on to the provider. The flow ends at `redirectTo`, where
   * `completeSignIn()` finishes it.
   */
  signInWith(provider: string, options: SignInWithOptions): Promise<void>;
  /**
   * Finishes a flow at the page it came back to: reads `code`, `error` or `linked` from the
   * address bar and removes them (`history.replaceState`); exchanges a code with this tab's
   * verifier at `POST /api/auth/federation/token` and keeps the session as `login()` does.
   */
  completeSignIn(options?: CompleteSignInOptions): Promise<CompleteSignInResult>;
  /**
   * Links an identity at `provider` to the signed-in account: `POST
   * /api/auth/federation/{provider}/link` with the password, then sends the browser to the
   * provider. The flow ends at `redirectTo`, where `completeSignIn()` says `linked`.
   */
  linkProvider(provider: string, options: LinkProviderOptions): Promise<void>;
  /** The identities linked to the account: `GET /api/auth/identities`. */
  identities(): Promise<LinkedIdentityList>;
  /** `DELETE /api/auth/identities/{id}`; refused while it is the account's only way in. */
  unlinkIdentity(id: string): Promise<void>;
}

/** The refusals of `POST /api/auth/refresh` that end a session; nothing else does. */
const SESSION_ENDING_REFUSALS: readonly string[] = [
  'Refresh token inválido.',
  'Refresh token revocado.',
  'Refresh token expirado.',
];

/** A failure answered by Keygate: its `status` and `message` exactly as the interface gives them. */
export class KeygateError extends Error {
  override readonly name = 'KeygateError';

  constructor(
    readonly status: number,
    message: string,
    /** The whole answer body: the error body, or problem details with their `errors`. */
    readonly body: unknown,
  ) {
    super(message);
  }

  /** Login needs the second factor's code: ask for it and log in again with `code`. */
  get codeRequired(): boolean {
    return this.status === 401 && this.message === 'Se requiere el código de verificación.';
  }

  /** A refresh refusal that ended the session: the person has to log in again. */
  get sessionEnded(): boolean {
    return this.status === 401 && SESSION_ENDING_REFUSALS.includes(this.message);
  }
}

/** The session as kept in storage and handed between tabs. */
interface Session extends AuthResponse {
  /** The session id (the access token's `sid`), stable across rotations. */
  readonly sid: string;
  /**
   * When the access token expires by this machine's clock: its life (`exp` - `iat`) from when
   * it arrived, so that a clock that disagrees with Keygate's neither refreshes at every call
   * nor too late.
   */
  readonly expiresAt: number;
  /** The access token's life, in milliseconds. */
  readonly lifeMs: number;
}

/** What the shared record holds for a session: its newest pair, or that it ended. */
type SharedRecord = Session | { readonly sid: string; readonly ended: true };

type TabMessage =
  | { readonly kind: 'pair'; readonly session: Session }
  | { readonly kind: 'ended'; readonly sid: string };

/** Refresh when less than this share of the access token's life is left (at most MAX_MARGIN_MS). */
const MARGIN_SHARE = 0.25;
const MAX_MARGIN_MS = 60_000;
/** Backoff after network errors and 5xx: 1 s doubling up to 60 s, each delay jittered by ±50 %. */
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 60_000;
/** A refresh request (answer included) that takes longer has lost its answer. */
const REFRESH_TIMEOUT_MS = 15_000;
/** An IndexedDB lease's term: a refresh and its one retry fit in it; a crashed tab's lapses. */
const LEASE_MS = 2 * REFRESH_TIMEOUT_MS + 5_000;

const systemClock: KeygateClock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    const handle: unknown = globalThis.setTimeout(callback, ms);
    // A Node process need not stay up for a proactive refresh.
    (handle as { unref?: () => void }).unref?.();
    return handle;
  },
  clearTimeout: (handle) => globalThis.clearTimeout(handle as number),
};

function memoryStorage(): KeygateStorage {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

function isAuthResponse(value: unknown): value is AuthResponse {
  const candidate = value as Partial<AuthResponse> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.accessToken === 'string' &&
    typeof candidate.refreshToken === 'string' &&
    typeof candidate.accessTokenExpiry === 'string'
  );
}

/** An access token's claims, read without verifying: Keygate signed it, and this client only schedules by them. */
function claimsOf(accessToken: string): { sid?: unknown; iat?: unknown; exp?: unknown } {
  const payload = accessToken.split('.')[1] ?? '';
  const base64 = payload.replace(/-/g, '+').replace(/_/g, '/');
  const json = new TextDecoder().decode(
    Uint8Array.from(atob(base64), (char) => char.charCodeAt(0)),
  );
  return JSON.parse(json) as { sid?: unknown; iat?: unknown; exp?: unknown };
}

/** A pair as this client keeps it, `receivedAt` by its own clock. */
function asSession(pair: AuthResponse, receivedAt: number): Session {
  const { sid, iat, exp } = claimsOf(pair.accessToken);
  if (typeof sid !== 'string') {
    throw new Error('The access token names no session (sid).');
  }
  const lifeMs =
    typeof iat === 'number' && typeof exp === 'number'
      ? (exp - iat) * 1000
      : Date.parse(pair.accessTokenExpiry) - receivedAt;
  return {
    accessToken: pair.accessToken,
    refreshToken: pair.refreshToken,
    accessTokenExpiry: pair.accessTokenExpiry,
    user: pair.user,
    sid,
    expiresAt: receivedAt + lifeMs,
    lifeMs,
  };
}

function parseSession(text: string | null): Session | null {
  if (text === null) {
    return null;
  }
  try {
    const value: unknown = JSON.parse(text);
    const candidate = value as Partial<Session>;
    return isAuthResponse(value) &&
      typeof candidate.sid === 'string' &&
      typeof candidate.expiresAt === 'number' &&
      typeof candidate.lifeMs === 'number'
      ? (value as Session)
      : null;
  } catch {
    return null;
  }
}

/** An IndexedDB request's result, typed by the caller (IndexedDB's own type is `any`). */
function request<T>(operation: IDBRequest<unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    operation.onsuccess = () => resolve(operation.result as T);
    operation.onerror = () => reject(operation.error ?? new Error('IndexedDB request failed'));
  });
}

function committed(transaction: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () =>
      reject(transaction.error ?? new Error('IndexedDB transaction failed'));
    transaction.onabort = () =>
      reject(transaction.error ?? new Error('IndexedDB transaction aborted'));
  });
}

/**
 * The record tabs hand sessions over in. IndexedDB, because a committed transaction is what
 * every tab reads next; a localStorage write reaches other tabs asynchronously, after the lock
 * has passed (decision 0042).
 */
class SharedRecords {
  private database: Promise<IDBDatabase> | undefined;

  constructor(
    private readonly factory: IDBFactory,
    private readonly name: string,
  ) {}

  private open(): Promise<IDBDatabase> {
    this.database ??= new Promise((resolve, reject) => {
      const opening = this.factory.open(this.name, 1);
      opening.onupgradeneeded = () => {
        opening.result.createObjectStore('sessions');
        opening.result.createObjectStore('leases');
      };
      opening.onsuccess = () => resolve(opening.result);
      opening.onerror = () => reject(opening.error ?? new Error('IndexedDB open failed'));
    });
    return this.database;
  }

  async read(sid: string): Promise<SharedRecord | undefined> {
    const database = await this.open();
    return request<SharedRecord | undefined>(
      database
        .transaction('sessions', 'readonly')
        .objectStore('sessions')
        .get(sid) as IDBRequest<unknown>,
    );
  }

  /** Resolves once the write is committed, so that the next holder of the lock reads it. */
  async write(record: SharedRecord): Promise<void> {
    const database = await this.open();
    const transaction = database.transaction('sessions', 'readwrite');
    transaction.objectStore('sessions').put(record, record.sid);
    await committed(transaction);
  }

  /** Takes the lease when it is free or expired; readwrite transactions of a store run one at a time. */
  async tryLease(lock: string, owner: string, now: number): Promise<boolean> {
    const database = await this.open();
    const transaction = database.transaction('leases', 'readwrite');
    const leases = transaction.objectStore('leases');
    const lease = await request<{ owner: string; until: number } | undefined>(
      leases.get(lock) as IDBRequest<unknown>,
    );
    const free = lease === undefined || lease.until <= now;
    if (free) {
      leases.put({ owner, until: now + LEASE_MS }, lock);
    }
    await committed(transaction);
    return free;
  }

  async releaseLease(lock: string, owner: string): Promise<void> {
    const database = await this.open();
    const transaction = database.transaction('leases', 'readwrite');
    const leases = transaction.objectStore('leases');
    const lease = await request<{ owner: string } | undefined>(
      leases.get(lock) as IDBRequest<unknown>,
    );
    if (lease?.owner === owner) {
      leases.delete(lock);
    }
    await committed(transaction);
  }
}

interface Answer {
  readonly response: Response;
  readonly body: unknown;
}

async function readAnswer(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page, say): the text is the body.
  }
  return { response, body };
}

function failure({ response, body }: Answer): KeygateError {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as {
    message?: unknown;
    title?: unknown;
  };
  const message =
    typeof fields.message === 'string'
      ? fields.message
      : typeof fields.title === 'string'
        ? fields.title
        : response.statusText || `HTTP ${response.status}`;
  return new KeygateError(response.status, message, body);
}

/** The bearer guard's refusal (`WWW-Authenticate: Bearer`), as opposed to a wrong password's 401. */
function bearerRefused(response: Response): boolean {
  return (
    response.status === 401 && (response.headers.get('WWW-Authenticate') ?? '').startsWith('Bearer')
  );
}

/** Bytes as base64url without padding, the encoding of WebAuthn's JSON forms. */
function toBase64url(bytes: ArrayBuffer | ArrayBufferView): string {
  const view =
    bytes instanceof ArrayBuffer
      ? new Uint8Array(bytes)
      : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let binary = '';
  for (const byte of view) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): ArrayBuffer {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
  return Uint8Array.from(atob(padded), (char) => char.charCodeAt(0)).buffer;
}

type CredentialDescriptorJSON = { id: string; type: 'public-key'; transports?: string[] };

function descriptors(list: CredentialDescriptorJSON[] | undefined) {
  return list?.map((descriptor) => ({
    ...descriptor,
    id: fromBase64url(descriptor.id),
    transports: descriptor.transports as AuthenticatorTransport[] | undefined,
  }));
}

/** The browser's own parsers where it has them (Chromium 129, Firefox 119, Safari 18.4). */
interface PublicKeyCredentialParsers {
  parseCreationOptionsFromJSON?(options: unknown): PublicKeyCredentialCreationOptions;
  parseRequestOptionsFromJSON?(options: unknown): PublicKeyCredentialRequestOptions;
}

function parsers(): PublicKeyCredentialParsers {
  return (
    (globalThis as { PublicKeyCredential?: PublicKeyCredentialParsers }).PublicKeyCredential ?? {}
  );
}

function creationOptions(options: PasskeyCreationOptions): PublicKeyCredentialCreationOptions {
  const browser = parsers();
  if (typeof browser.parseCreationOptionsFromJSON === 'function') {
    return browser.parseCreationOptionsFromJSON(options);
  }
  return {
    ...(options as unknown as PublicKeyCredentialCreationOptions),
    challenge: fromBase64url(options.challenge),
    user: { ...options.user, id: fromBase64url(options.user.id) },
    excludeCredentials: descriptors(options.excludeCredentials),
  };
}

function requestOptions(options: PasskeyRequestOptions): PublicKeyCredentialRequestOptions {
  const browser = parsers();
  if (typeof browser.parseRequestOptionsFromJSON === 'function') {
    return browser.parseRequestOptionsFromJSON(options);
  }
  return {
    ...(options as unknown as PublicKeyCredentialRequestOptions),
    challenge: fromBase64url(options.challenge),
    allowCredentials: descriptors(options.allowCredentials),
  };
}

/** What a browser without `toJSON()` on its credentials still offers. */
interface BrowserCredential {
  readonly id: string;
  readonly rawId: ArrayBuffer;
  readonly type: string;
  readonly authenticatorAttachment?: string | null;
  readonly response: {
    readonly clientDataJSON: ArrayBuffer;
    readonly attestationObject?: ArrayBuffer;
    readonly authenticatorData?: ArrayBuffer;
    readonly signature?: ArrayBuffer;
    readonly userHandle?: ArrayBuffer | null;
    getTransports?(): string[];
    getAuthenticatorData?(): ArrayBuffer;
    getPublicKey?(): ArrayBuffer | null;
    getPublicKeyAlgorithm?(): number;
  };
  getClientExtensionResults?(): unknown;
  toJSON?(): unknown;
}

/** The credential's JSON form: the browser's `toJSON()`, or the same encoding made here. */
function credentialJSON(credential: BrowserCredential): unknown {
  if (typeof credential.toJSON === 'function') {
    return credential.toJSON();
  }
  const { response } = credential;
  const common = {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    clientExtensionResults: credential.getClientExtensionResults?.() ?? {},
    ...(typeof credential.authenticatorAttachment === 'string'
      ? { authenticatorAttachment: credential.authenticatorAttachment }
      : {}),
  };
  if (response.attestationObject !== undefined) {
    const authenticatorData = response.getAuthenticatorData?.();
    const publicKey = response.getPublicKey?.();
    return {
      ...common,
      response: {
        clientDataJSON: toBase64url(response.clientDataJSON),
        attestationObject: toBase64url(response.attestationObject),
        transports: response.getTransports?.() ?? [],
        ...(authenticatorData === undefined
          ? {}
          : { authenticatorData: toBase64url(authenticatorData) }),
        ...(publicKey === undefined || publicKey === null
          ? {}
          : { publicKey: toBase64url(publicKey) }),
        ...(response.getPublicKeyAlgorithm === undefined
          ? {}
          : { publicKeyAlgorithm: response.getPublicKeyAlgorithm() }),
      },
    };
  }
  return {
    ...common,
    response: {
      clientDataJSON: toBase64url(response.clientDataJSON),
      authenticatorData: toBase64url(response.authenticatorData ?? new ArrayBuffer(0)),
      signature: toBase64url(response.signature ?? new ArrayBuffer(0)),
      ...(response.userHandle === undefined || response.userHandle === null
        ? {}
        : { userHandle: toBase64url(response.userHandle) }),
    },
  };
}

/** The browser's WebAuthn; outside a browser (or on plain http other than localhost) there is none. */
function credentialsContainer(): CredentialsContainer {
  const container = (globalThis as { navigator?: { credentials?: CredentialsContainer } }).navigator
    ?.credentials;
  if (container === undefined) {
    throw new DOMException('WebAuthn is not available here.', 'NotSupportedError');
  }
  return container;
}

/** A credential the browser made or chose; null (which no dialog should give) is a refusal. */
function made(credential: Credential | null): BrowserCredential {
  if (credential === null) {
    throw new DOMException('The browser gave no credential.', 'NotAllowedError');
  }
  return credential as unknown as BrowserCredential;
}

async function createPasskey(
  credentials: CredentialsContainer,
  options: PasskeyCreationOptions,
  signal: AbortSignal | undefined,
): Promise<PasskeyRegistration> {
  const credential = await credentials.create({
    publicKey: creationOptions(options),
    signal,
  });
  return credentialJSON(made(credential)) as PasskeyRegistration;
}

async function assertPasskey(
  credentials: CredentialsContainer,
  options: PasskeyRequestOptions,
  settings: SignInWithPasskeyOptions = {},
): Promise<PasskeyAssertion> {
  const credential = await credentials.get({
    publicKey: requestOptions(options),
    ...(settings.mediation === undefined ? {} : { mediation: settings.mediation }),
    signal: settings.signal,
  });
  return credentialJSON(made(credential)) as PasskeyAssertion;
}

/** The refusal of a one-time code itself: it is gone, and so is the flow that held it. */
const SIGN_IN_CODE_REFUSED = 'Código de inicio de sesión inválido o expirado.';
/** What a flow's return adds to its `redirectTo`; removed from the address bar once read. */
const RETURN_PARAMETERS = ['code', 'error', 'linked'] as const;

/**
 * A flow started in this tab, kept in sessionStorage: the tab's own (a provider's redirects
 * stay in the tab that left), so flows of two tabs never meet, and kept across the full-page
 * navigations of the flow. `code` is set while a second factor is awaited.
 */
interface FederationFlow {
  readonly provider: string;
  readonly codeVerifier: string;
  readonly code?: string;
}

function parseFlow(text: string | null): FederationFlow | null {
  if (text === null) {
    return null;
  }
  try {
    const value = JSON.parse(text) as Partial<FederationFlow> | null;
    return typeof value?.provider === 'string' &&
      typeof value.codeVerifier === 'string' &&
      (value.code === undefined || typeof value.code === 'string')
      ? (value as FederationFlow)
      : null;
  } catch {
    return null;
  }
}

/** This tab's sessionStorage; none in Node. */
function tabStorageIfAny(): Storage | undefined {
  return (globalThis as { sessionStorage?: Storage }).sessionStorage;
}

function tabStorage(): Storage {
  const storage = tabStorageIfAny();
  if (storage === undefined) {
    throw new DOMException('sessionStorage is not available here.', 'NotSupportedError');
  }
  return storage;
}

/** A PKCE pair (RFC 7636, S256): 32 random bytes as the verifier, and its SHA-256. */
async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const crypto = (globalThis as { crypto?: Crypto }).crypto;
  if (crypto?.subtle === undefined) {
    // WebCrypto's digest exists only in secure contexts (https, localhost).
    throw new DOMException('WebCrypto is not available here.', 'NotSupportedError');
  }
  const verifier = toBase64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return { verifier, challenge: toBase64url(digest) };
}

/** The parameters a flow's return carried, read from the address bar and removed from it. */
function takeReturnParameters(): Partial<Record<(typeof RETURN_PARAMETERS)[number], string>> {
  const href = (globalThis as { location?: { href: string } }).location?.href;
  if (href === undefined) {
    return {};
  }
  const url = new URL(href);
  const found: Partial<Record<(typeof RETURN_PARAMETERS)[number], string>> = {};
  for (const name of RETURN_PARAMETERS) {
    const value = url.searchParams.get(name);
    if (value !== null) {
      found[name] = value;
      url.searchParams.delete(name);
    }
  }
  if (Object.keys(found).length > 0) {
    // Out of the address bar and the history at once: a one-time code is nobody's bookmark.
    const history = (globalThis as { history?: History }).history;
    history?.replaceState(history.state, '', url.href);
  }
  return found;
}

export function createKeygateClient(options: KeygateClientOptions): KeygateClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const name = options.name ?? 'keygate';
  const storageKey = `${name}.session`;
  const clock = options.testOnly?.clock ?? systemClock;
  const random = options.testOnly?.random ?? Math.random;
  const send: FetchFunction = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const navigate = options.navigate ?? ((url: string) => globalThis.location.assign(url));
  const flowKey = `${name}.federation`;
  const choice = options.storage ?? 'memory';
  const storage: KeygateStorage =
    choice === 'memory'
      ? memoryStorage()
      : choice === 'local'
        ? globalThis.localStorage
        : choice === 'session'
          ? globalThis.sessionStorage
          : choice;
  /** Tabs to coordinate with: any storage but memory, in a browser. */
  const browser =
    typeof globalThis.indexedDB !== 'undefined' &&
    typeof globalThis.BroadcastChannel !== 'undefined';
  const coordination: Coordination =
    options.testOnly?.coordination ??
    (choice === 'memory' || !browser
      ? 'none'
      : typeof globalThis.navigator?.locks?.request === 'function'
        ? 'web-locks'
        : 'indexeddb-lease');
  /** With 'session', only tabs duplicated from this one share its session; other sessions are theirs. */
  const sharedStorage = choice !== 'session';
  /** The test-only client without coordination: presents whatever token this tab last saw. */
  const naive = options.testOnly?.coordination === 'none';
  const shared =
    browser && choice !== 'memory'
      ? new SharedRecords(globalThis.indexedDB, `${name}-handoff`)
      : undefined;
  const channel =
    browser && choice !== 'memory' ? new BroadcastChannel(`${name}-session`) : undefined;
  const lockName = `${name}-refresh`;

  let session: Session | null = null;
  const listeners = new Set<(state: SessionState) => void>();
  let timer: unknown;
  let failures = 0;
  let inFlight: Promise<AuthResponse> | undefined;
  let tail: Promise<unknown> = Promise.resolve();

  function state(): SessionState {
    return session === null
      ? null
      : { user: session.user, accessTokenExpiry: session.accessTokenExpiry };
  }

  function tell(): void {
    const now = state();
    for (const listener of listeners) {
      listener(now);
    }
  }

  function expiryOf(current: Session): number {
    return current.expiresAt;
  }

  /** How long before expiry a refresh is due: a quarter of the token's life, at most a minute. */
  function marginOf(current: Session): number {
    return Math.min(MAX_MARGIN_MS, Math.max(0, current.lifeMs * MARGIN_SHARE));
  }

  function due(current: Session): boolean {
    return clock.now() >= expiryOf(current) - marginOf(current);
  }

  /**
   * The next proactive refresh: shortly before expiry, a random part of the margin earlier so
   * that tabs (and people) opened together do not all come at once; after a failure, the backoff.
   */
  function schedule(): void {
    if (timer !== undefined) {
      clock.clearTimeout(timer);
      timer = undefined;
    }
    if (session === null) {
      return;
    }
    const margin = marginOf(session);
    const delay =
      failures > 0
        ? Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (failures - 1)) * (0.5 + random())
        : expiryOf(session) - margin * (1 + random() * 0.5) - clock.now();
    timer = clock.setTimeout(
      () => {
        timer = undefined;
        void refreshWhenDue().catch(() => undefined);
      },
      Math.max(0, delay),
    );
  }

  /** Adopts a session (or its end) in this tab's memory, without touching storage. */
  function adopt(next: Session | null): void {
    if (next?.refreshToken === session?.refreshToken) {
      return;
    }
    session = next;
    failures = 0;
    schedule();
    tell();
  }

  /** Keeps a new pair: the shared record first (committed), then storage, then the other tabs. */
  async function keep(pair: AuthResponse): Promise<Session> {
    const next = asSession(pair, clock.now());
    await shared?.write(next);
    await storage.setItem(storageKey, JSON.stringify(next));
    channel?.postMessage({ kind: 'pair', session: next } satisfies TabMessage);
    adopt(next);
    return next;
  }

  /** Ends a session everywhere: the record says so, storage forgets it, the other tabs hear it. */
  async function end(sid: string): Promise<void> {
    await shared?.write({ sid, ended: true });
    if (parseSession(await storage.getItem(storageKey))?.sid === sid) {
      await storage.removeItem(storageKey);
    }
    channel?.postMessage({ kind: 'ended', sid } satisfies TabMessage);
    if (session?.sid === sid) {
      adopt(null);
    }
  }

  /**
   * The newest state of the session that any tab wrote, adopted before anything else: with
   * shared storage the session is storage's (a login in another tab replaces this tab's), with
   * 'session' this tab's own; its pair comes from the shared record, which is never stale.
   */
  async function reread(): Promise<void> {
    const stored = parseSession(await storage.getItem(storageKey));
    const sid = sharedStorage ? (stored?.sid ?? session?.sid) : (session?.sid ?? stored?.sid);
    const record = sid === undefined ? undefined : await shared?.read(sid);
    if (record !== undefined) {
      adopt('ended' in record ? null : record);
    } else if (stored !== null && stored.sid === sid) {
      adopt(stored);
    }
  }

  channel?.addEventListener('message', (event: MessageEvent<TabMessage>) => {
    const message = event.data;
    if (message.kind === 'ended') {
      if (session?.sid === message.sid) {
        adopt(null);
      }
    } else if (sharedStorage || session?.sid === message.session.sid) {
      adopt(message.session);
    }
  });

  /** One holder at a time in this tab; across tabs, the lock of the coordination in force. */
  function exclusively<T>(work: () => Promise<T>): Promise<T> {
    const run = tail.then(() => acrossTabs(work));
    tail = run.catch(() => undefined);
    return run;
  }

  async function acrossTabs<T>(work: () => Promise<T>): Promise<T> {
    if (coordination === 'web-locks') {
      return globalThis.navigator.locks.request(lockName, work);
    }
    if (coordination === 'indexeddb-lease' && shared !== undefined) {
      const owner = `${clock.now()}-${random()}`;
      for (let attempt = 0; !(await shared.tryLease(lockName, owner, Date.now())); attempt += 1) {
        await new Promise((resolve) =>
          globalThis.setTimeout(resolve, Math.min(250, 10 * 2 ** attempt) * (0.5 + random())),
        );
      }
      try {
        return await work();
      } finally {
        await shared.releaseLease(lockName, owner);
      }
    }
    return work();
  }

  /** The refresh request; an answer lost on the way back is asked for once more (see retry window). */
  async function present(refreshToken: string): Promise<Answer> {
    // Bounded, so that a request that hangs cannot hold every tab's lock; its answer counts as lost.
    const attempt = async () =>
      readAnswer(
        await send(`${baseUrl}/api/auth/refresh`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ refreshToken }),
          signal: AbortSignal.timeout(REFRESH_TIMEOUT_MS),
        }),
      );
    try {
      return await attempt();
    } catch {
      return attempt();
    }
  }

  /** Refresh under the lock, unless a sibling already did it since `seen` was this tab's token. */
  async function rotate(seen: string | undefined): Promise<AuthResponse> {
    return exclusively(async () => {
      if (!naive) {
        await reread();
      }
      const current = session;
      if (current === null) {
        throw new KeygateError(401, 'Refresh token inválido.', null);
      }
      if (current.refreshToken !== seen) {
        return current;
      }
      let answer: Answer;
      try {
        answer = await present(current.refreshToken);
      } catch (error) {
        failures += 1;
        schedule();
        throw error;
      }
      if (answer.response.ok && isAuthResponse(answer.body)) {
        return keep(answer.body);
      }
      const refused = failure(answer);
      if (refused.sessionEnded) {
        // A sibling's rotation is no reason to sign out: look again before wiping anything.
        await reread();
        if (session !== null && session.refreshToken !== current.refreshToken) {
          return session;
        }
        await end(current.sid);
      } else {
        failures += 1;
        schedule();
      }
      throw refused;
    });
  }

  function refreshOnce(): Promise<AuthResponse> {
    inFlight ??= rotate(session?.refreshToken).finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  async function refreshWhenDue(): Promise<void> {
    await loaded;
    if (session !== null && (due(session) || failures > 0)) {
      await refreshOnce();
    }
  }

  async function getAccessToken(): Promise<string | null> {
    await loaded;
    const current = session;
    if (current === null) {
      return null;
    }
    if (due(current)) {
      try {
        await refreshOnce();
      } catch (error) {
        // Still valid for a while: the backoff retries; an expired token is no use to anyone.
        if (session === null || clock.now() >= expiryOf(session)) {
          throw error;
        }
      }
    }
    return session?.accessToken ?? null;
  }

  /**
   * Sends what `build` makes of the newest access token (and session); on a refusal of that
   * token, refreshes once (or takes the pair a sibling tab obtained) and sends once more.
   */
  async function authorized(
    build: (token: string | null, current: Session | null) => Request,
    onAny401: boolean,
  ): Promise<Response> {
    const token = await getAccessToken();
    const first = await send(build(token, session));
    if (token === null || !(onAny401 ? first.status === 401 : bearerRefused(first))) {
      return first;
    }
    try {
      await reread();
      if (session !== null && session.accessToken === token) {
        await refreshOnce();
      }
    } catch {
      return first;
    }
    if (session === null) {
      return first;
    }
    await first.body?.cancel();
    return send(build(session.accessToken, session));
  }

  /** The application's own request with the bearer; its body must be re-sendable. */
  function fetchWithBearer(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const template = new Request(input, init);
    return authorized((token) => {
      const headers = new Headers(template.headers);
      if (token !== null) {
        headers.set('Authorization', `Bearer ${token}`);
      }
      return new Request(template.clone(), { headers });
    }, true);
  }

  async function call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const init: RequestInit = {
      method,
      headers: {
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    };
    const answer = await readAnswer(await send(`${baseUrl}${path}`, init));
    if (!answer.response.ok) {
      throw failure(answer);
    }
    return answer.body as T;
  }

  /**
   * A Keygate route behind the bearer guard. `content` makes the body and headers from the
   * session the request goes out with, so that a refresh on the way names the newest token.
   */
  async function bearer<T>(
    method: string,
    path: string,
    content: (current: Session | null) => {
      body?: unknown;
      headers?: Record<string, string>;
    } = () => ({}),
  ): Promise<T> {
    const response = await authorized((token, current) => {
      const { body, headers = {} } = content(current);
      return new Request(`${baseUrl}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
          ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    }, false);
    const answer = await readAnswer(response);
    if (!answer.response.ok) {
      throw failure(answer);
    }
    return answer.body as T;
  }

  async function signIn(path: string, body: unknown): Promise<AuthResponse> {
    await loaded;
    const pair = await call<AuthResponse>('POST', path, body);
    await exclusively(() => keep(pair));
    return pair;
  }

  /** An assertion of one of the account's passkeys, made with fresh request options. */
  async function assertion(settings?: SignInWithPasskeyOptions): Promise<PasskeyAssertion> {
    // Without WebAuthn, no challenge is spent.
    const credentials = credentialsContainer();
    const options = await call<PasskeyRequestOptions>('POST', '/api/auth/passkeys/login/options');
    return assertPasskey(credentials, options, settings);
  }

  /** The password first; the passkey only if Keygate asks for the second factor. */
  async function login(body: LoginRequest): Promise<AuthResponse> {
    if (body.passkey !== true) {
      return signIn('/api/auth/login', body);
    }
    const { passkey: _wanted, ...first } = body;
    try {
      return await signIn('/api/auth/login', first);
    } catch (error) {
      if (!(error instanceof KeygateError && error.codeRequired)) {
        throw error;
      }
    }
    return signIn('/api/auth/login', { ...first, passkey: await assertion() });
  }

  function keepFlow(flow: FederationFlow): void {
    tabStorage().setItem(flowKey, JSON.stringify(flow));
  }

  function dropFlow(): void {
    tabStorageIfAny()?.removeItem(flowKey);
  }

  /** The one-time code's exchange, with the second factor as `login()` takes it. */
  async function exchange(
    body: FederationTokenBody,
    settings: CompleteSignInOptions,
  ): Promise<AuthResponse> {
    const path = '/api/auth/federation/token';
    if (settings.secondFactorCode !== undefined || settings.passkey !== true) {
      return signIn(path, { ...body, secondFactorCode: settings.secondFactorCode });
    }
    try {
      return await signIn(path, body);
    } catch (error) {
      if (!(error instanceof KeygateError && error.codeRequired)) {
        throw error;
      }
    }
    return signIn(path, { ...body, passkey: await assertion() });
  }

  async function completeSignIn(
    settings: CompleteSignInOptions = {},
  ): Promise<CompleteSignInResult> {
    await loaded;
    const returned = takeReturnParameters();
    if (returned.error !== undefined || returned.linked !== undefined) {
      dropFlow();
      return returned.error !== undefined
        ? { status: 'error', error: returned.error }
        : { status: 'linked', provider: returned.linked ?? '' };
    }
    // A code in the address bar, or one kept while a second factor was awaited (say, across a reload).
    const flow = readFlow();
    const code = returned.code ?? flow?.code;
    if (code === undefined) {
      return { status: 'none' };
    }
    if (flow === null) {
      return { status: 'error', error: 'flow_not_found' };
    }
    try {
      const response = await exchange({ code, codeVerifier: flow.codeVerifier }, settings);
      dropFlow();
      return { status: 'signed-in', response };
    } catch (error) {
      const refusedCode =
        error instanceof KeygateError &&
        (error.status === 400 || (error.status === 401 && error.message === SIGN_IN_CODE_REFUSED));
      if (refusedCode) {
        dropFlow();
      } else {
        // Keygate keeps the code usable until it expires: a second factor, a wrong one, a lost answer.
        keepFlow({ ...flow, code });
      }
      if (error instanceof KeygateError && error.codeRequired) {
        return { status: 'second-factor-required' };
      }
      throw error;
    }
  }

  function readFlow(): FederationFlow | null {
    return parseFlow(tabStorageIfAny()?.getItem(flowKey) ?? null);
  }

  const loaded: Promise<void> = (async () => {
    try {
      await reread();
    } catch {
      // An unreadable storage or record starts without a session; login writes a fresh one.
    }
  })();

  if (typeof globalThis.document !== 'undefined') {
    // A tab that slept missed its timer: on return, refresh if the token is due.
    globalThis.document.addEventListener('visibilitychange', () => {
      if (globalThis.document.visibilityState === 'visible') {
        void refreshWhenDue().catch(() => undefined);
      }
    });
    globalThis.addEventListener?.('online', () => {
      void refreshWhenDue().catch(() => undefined);
    });
  }

  return {
    register: (body) => signIn('/api/auth/register', body),
    login,
    async logout() {
      await loaded;
      const token = await getAccessToken().catch(() => session?.accessToken ?? null);
      await exclusively(async () => {
        await reread();
        const current = session;
        if (current === null) {
          return;
        }
        try {
          await call(
            'POST',
            '/api/auth/revoke',
            { refreshToken: current.refreshToken },
            {
              Authorization: `Bearer ${token ?? current.accessToken}`,
            },
          );
        } finally {
          // Forgotten here and in every tab even when the revocation failed.
          await end(current.sid);
        }
      });
    },
    me: () => bearer<PublicUser>('GET', '/api/auth/me'),
    async refresh() {
      await loaded;
      return refreshOnce();
    },
    getAccessToken,
    fetch: fetchWithBearer,
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    changePassword: (body) => bearer('POST', '/api/auth/password/change', () => ({ body })),
    forgotPassword: (body) => call('POST', '/api/auth/password/forgot', body),
    resetPassword: (body) => call('POST', '/api/auth/password/reset', body),
    verifyEmail: (body) => call('POST', '/api/auth/email/verify', body),
    resendVerification: () => bearer('POST', '/api/auth/email/verify/resend'),
    changeEmail: (body) => bearer('POST', '/api/auth/email/change', () => ({ body })),
    async deleteAccount(body) {
      let sid: string | undefined;
      const answer = await bearer<MessageResponse>('DELETE', '/api/auth/me', (current) => {
        sid = current?.sid;
        return { body };
      });
      await exclusively(() => (sid === undefined ? Promise.resolve() : end(sid)));
      return answer;
    },
    listSessions: () =>
      bearer<SessionList>('GET', '/api/auth/sessions', (current) => ({
        headers: current === null ? undefined : { 'X-Refresh-Token': current.refreshToken },
      })),
    async revokeAllSessions(body = {}) {
      const keepCurrent = body.keepCurrent === true;
      let sid: string | undefined;
      const answer = await bearer<RevokedSessions>(
        'POST',
        '/api/auth/sessions/revoke-all',
        (current) => {
          sid = current?.sid;
          return { body: keepCurrent ? { keepCurrent, refreshToken: current?.refreshToken } : {} };
        },
      );
      if (!keepCurrent && sid !== undefined) {
        const ended = sid;
        await exclusively(() => end(ended));
      }
      return answer;
    },
    enrollTotp: (body) => bearer('POST', '/api/auth/mfa/totp/enroll', () => ({ body })),
    confirmTotp: (body) => bearer('POST', '/api/auth/mfa/totp/confirm', () => ({ body })),
    replaceRecoveryCodes: (body) =>
      bearer('POST', '/api/auth/mfa/totp/recovery-codes', () => ({ body })),
    disableTotp: (body) => bearer('POST', '/api/auth/mfa/totp/disable', () => ({ body })),
    async registerPasskey(options) {
      const credentials = credentialsContainer();
      const proof =
        'password' in options ? { password: options.password } : { passkey: await assertion() };
      const creation = await bearer<PasskeyCreationOptions>(
        'POST',
        '/api/auth/passkeys/register/options',
        () => ({ body: proof }),
      );
      const response = await createPasskey(credentials, creation, options.signal);
      const body = options.name === undefined ? { response } : { response, name: options.name };
      return bearer<Passkey>('POST', '/api/auth/passkeys/register/verify', () => ({ body }));
    },
    async signInWithPasskey(options) {
      const response = await assertion(options);
      return signIn('/api/auth/passkeys/login/verify', { response });
    },
    listPasskeys: () => bearer('GET', '/api/auth/passkeys'),
    renamePasskey: (id, body) =>
      bearer('PATCH', `/api/auth/passkeys/${encodeURIComponent(id)}`, () => ({ body })),
    async removePasskey(id) {
      await bearer<null>('DELETE', `/api/auth/passkeys/${encodeURIComponent(id)}`);
    },
    providers: () => call('GET', '/api/auth/federation/providers'),
    async signInWith(provider, { redirectTo }) {
      const { verifier, challenge } = await pkcePair();
      keepFlow({ provider, codeVerifier: verifier });
      const query = new URLSearchParams({ redirectTo, codeChallenge: challenge });
      navigate(
        `${baseUrl}/api/auth/federation/${encodeURIComponent(provider)}/authorize?${query.toString()}`,
      );
    },
    completeSignIn,
    async linkProvider(provider, { redirectTo, password }) {
      const { verifier, challenge } = await pkcePair();
      const body: LinkProviderBody = { redirectTo, codeChallenge: challenge, password };
      const { authorizeUrl } = await bearer<LinkProviderResponse>(
        'POST',
        `/api/auth/federation/${encodeURIComponent(provider)}/link`,
        () => ({ body }),
      );
      keepFlow({ provider, codeVerifier: verifier });
      navigate(authorizeUrl);
    },
    identities: () => bearer('GET', '/api/auth/identities'),
    async unlinkIdentity(id) {
      await bearer<null>('DELETE', `/api/auth/identities/${encodeURIComponent(id)}`);
    },
  };
}
