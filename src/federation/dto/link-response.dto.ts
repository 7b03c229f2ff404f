export class LinkResponseDto {
  /** Where to send the browser: the provider's authorization URL for this flow. */
  readonly authorizeUrl: string;
}
