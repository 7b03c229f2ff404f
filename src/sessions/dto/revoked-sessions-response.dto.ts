export class RevokedSessionsResponseDto {
  /** @example "Sesiones revocadas exitosamente." */
  readonly message: string;

  /** How many sessions this request ended. @example 2 */
  readonly revokedSessions: number;
}
