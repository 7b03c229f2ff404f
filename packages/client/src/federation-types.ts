// The bodies of Keygate's federation routes (sign-in through other identity providers, issue 38),
// written by hand from docs/federation.md because openapi.json does not list those routes yet.
// Once it does, these become aliases of openapi.ts's schemas, as the rest of the client's types
// are, and this file goes.

/** A provider people may sign in with: `GET /api/auth/federation/providers`. */
export interface FederationProvider {
  /** Its id in the routes, such as `google`. */
  readonly id: string;
  /** What people are shown, such as `Google`. */
  readonly name: string;
}

export interface FederationProviderList {
  readonly providers: FederationProvider[];
}

/** An identity at another provider linked to the account: `GET /api/auth/identities`. */
export interface LinkedIdentity {
  readonly id: string;
  /** The provider's id. */
  readonly provider: string;
  /** The person's id at the provider. */
  readonly subject: string;
  /** The address the provider last gave, verified or not. */
  readonly email: string | null;
  /** ISO 8601. */
  readonly linkedAt: string;
  /** ISO 8601; null until the identity is first used to sign in. */
  readonly lastUsedAt: string | null;
}

export interface LinkedIdentityList {
  readonly identities: LinkedIdentity[];
}

/** `POST /api/auth/federation/token`. */
export interface FederationTokenBody {
  /** The one-time code the flow's redirect carried. */
  readonly code: string;
  /** The PKCE verifier whose S256 challenge started the flow. */
  readonly codeVerifier: string;
  /** For an account with a second factor: its app's six digits or a recovery code. */
  readonly secondFactorCode?: string | null;
}

/** `POST /api/auth/federation/{provider}/link`. */
export interface LinkProviderBody {
  /** One of Keygate's `Federation__RedirectUrls`, exactly. */
  readonly redirectTo: string;
  /** BASE64URL(SHA-256(codeVerifier)). */
  readonly codeChallenge: string;
  /** The account's current password. */
  readonly password: string;
}

export interface LinkProviderResponse {
  /** Where to send the browser: the provider's authorization URL for this flow. */
  readonly authorizeUrl: string;
}

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
