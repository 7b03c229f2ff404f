/** An application the person let sign them in, and what it may read. */
export class OAuthGrantResponseDto {
  /** The application's client id. */
  readonly clientId: string;

  /** The application's name, as the operator registered it (text, never markup). */
  readonly clientName: string;

  /** The scopes granted, among `openid`, `profile`, `email`, `offline_access`. */
  readonly scopes: string[];

  /** When the person last consented, ISO 8601 UTC. */
  readonly grantedAt: string;
}

export class OAuthGrantListResponseDto {
  /** Newest first; empty when the person granted nothing. */
  readonly grants: OAuthGrantResponseDto[];
}
