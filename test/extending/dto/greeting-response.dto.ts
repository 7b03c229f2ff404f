export class GreetingResponseDto {
  /** @example "Hello, alice@example.com!" */
  readonly greeting: string;

  /** The caller's user id (the token's `sub`); absent for anonymous callers. */
  readonly userId?: string;
}
