export class MessageResponseDto {
  /** @example "Token revocado exitosamente." */
  readonly message: string;
}
