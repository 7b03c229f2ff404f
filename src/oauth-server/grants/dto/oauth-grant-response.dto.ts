import { ApiProperty } from '@nestjs/swagger';

/** An application the person let sign them in, and what it may read. */
export class OAuthGrantResponseDto {
  /** The application's client id. */
  readonly clientId: string;

  /** The application's name, as the operator registered it (text, never markup). */
  readonly clientName: string;

  /** The scopes granted, among `openid`, `profile`, `email`, `offline_access`. */
  readonly scopes: string[];

  /** When the person last consented, ISO 8601 UTC. */
  @ApiProperty({ format: 'date-time' })
  readonly grantedAt: string;
}

/** What the documents show of a grant. */
export const OAUTH_GRANT_RESPONSE_EXAMPLE: OAuthGrantResponseDto = {
  clientId: '0b8e6f4a-5c1d-4e2f-9a7b-3c6d8e1f2a4b',
  clientName: 'Grafana',
  scopes: ['openid', 'email', 'offline_access'],
  grantedAt: '2026-11-29T10:15:00.000Z',
};

export class OAuthGrantListResponseDto {
  /** Newest first; empty when the person granted nothing. */
  readonly grants: OAuthGrantResponseDto[];
}
