/** An application the account gave consent to, and what it covers. */
export class OAuthGrantResponseDto {
  /** The application's client id. @example "6f1c1c9e-6a43-4a39-8f6f-1d2f4a1f0b11" */
  readonly clientId: string;

  /** Its name as the operator registered it: free text, never markup. @example "Grafana" */
  readonly clientName: string;

  /** The scopes approved, in the order openid, profile, email, offline_access. @example ["openid","email"] */
  readonly scopes: string[];

  /** When consent was first given. */
  readonly grantedAt: Date;

  /** When the consent lapses unless the application signs the person in again. */
  readonly expiresAt: Date | null;
}

export class OAuthGrantsResponseDto {
  readonly grants: OAuthGrantResponseDto[];
}
