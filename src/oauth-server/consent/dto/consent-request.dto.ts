import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';

export class ConsentChallengeParamsDto {
  /** The `consent_challenge` Keygate added to the consent page's address. */
  @Matches(/^[A-Za-z0-9_-]{1,64}$/)
  readonly challenge: string;
}

/** The scopes asked of one API (RFC 8707 resource indicator). */
export class ConsentResourceScopesDto {
  readonly resource: string;
  readonly scopes: string[];
}

/** A consent Keygate waits for, as a team's consent page shows it. */
export class ConsentRequestResponseDto {
  readonly challenge: string;

  @ApiProperty({ format: 'uuid' })
  readonly clientId: string;

  /** The client's name: free text, to be shown as text, never as markup. */
  readonly clientName: string;

  /** The client registered itself: nobody vouches for it (say so to the person). */
  readonly unverified: boolean;

  /** A client that registered itself and returns only to this machine (localhost). */
  readonly localOnly: boolean;

  /** The host (and port) the person returns to after the decision. */
  readonly returnHost: string;

  @ApiProperty({ format: 'uuid' })
  readonly userId: string;

  readonly email: string;

  /** The OpenID scopes asked (`openid`, `profile`, `email`, `offline_access`). */
  readonly scopes: string[];

  /** The scopes asked of each API. */
  readonly resources: ConsentResourceScopesDto[];

  /** When the request expires: the decision must come before. */
  @ApiProperty({ format: 'date-time' })
  readonly expiresAt: string;
}

/** Where the team's page sends the person's browser next: back into the sign-in flow. */
export class ConsentDecisionResponseDto {
  readonly redirectTo: string;
}
