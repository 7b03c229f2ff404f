/** A provider people may sign in with. */
export class ProviderSummaryDto {
  /** Its id in the routes. @example "google" */
  readonly id: string;

  /** What people are shown. @example "Google" */
  readonly name: string;
}

export class ProvidersResponseDto {
  readonly providers: ProviderSummaryDto[];
}
