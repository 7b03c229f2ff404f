import { ApiProperty } from '@nestjs/swagger';

/** What an admin change did. */
export class AdminChangeResponseDto {
  @ApiProperty({ format: 'uuid' })
  readonly userId: string;

  /**
   * False when the account already was as asked (already deactivated, nothing to unlock, no
   * factor, already verified, the session already over); the call is recorded either way.
   */
  readonly changed: boolean;

  /** Deactivate and logout: how many sessions this call ended. */
  readonly revokedSessions?: number;

  /** passkeys-remove: how many passkeys this call removed. */
  readonly removedPasskeys?: number;
}
