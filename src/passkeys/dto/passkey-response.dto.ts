import { ApiProperty } from '@nestjs/swagger';
import type { Passkey } from '../entities/passkey.entity.js';

export const PASSKEY_RESPONSE_EXAMPLE = {
  id: '0b7e3a52-5d2f-4c2e-9f7e-1c4b8f0d2a61',
  name: 'Portátil del trabajo',
  createdAt: '2026-01-01T10:42:00.000Z',
  lastUsedAt: '2026-01-02T08:15:27.310Z',
  isBackupEligible: true,
  isBackedUp: true,
  transports: ['internal', 'hybrid'],
} as const;

export class PasskeyResponseDto {
  /** What PATCH and DELETE /api/auth/passkeys/{id} name. */
  @ApiProperty({ format: 'uuid', example: PASSKEY_RESPONSE_EXAMPLE.id })
  readonly id: string;

  /** @example "Portátil del trabajo" */
  readonly name: string;

  /** ISO 8601 UTC. */
  @ApiProperty({ format: 'date-time', example: PASSKEY_RESPONSE_EXAMPLE.createdAt })
  readonly createdAt: string;

  /** ISO 8601 UTC; null until the passkey signs a first time after its registration. */
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    example: PASSKEY_RESPONSE_EXAMPLE.lastUsedAt,
  })
  readonly lastUsedAt: string | null;

  /** The passkey may be synced to the owner's other devices (a password manager, a platform account). */
  readonly isBackupEligible: boolean;

  /** It was backed up when last seen. */
  readonly isBackedUp: boolean;

  /** How the browser reaches its authenticator, as it said at registration. @example ["internal","hybrid"] */
  readonly transports: string[];

  static from(passkey: Passkey): PasskeyResponseDto {
    return {
      id: passkey.id,
      name: passkey.name,
      createdAt: passkey.createdAt.toISOString(),
      lastUsedAt: passkey.lastUsedAt?.toISOString() ?? null,
      isBackupEligible: passkey.isBackupEligible,
      isBackedUp: passkey.isBackedUp,
      transports: passkey.transports === null ? [] : passkey.transports.split(','),
    };
  }
}

export class PasskeyListResponseDto {
  /** The account's passkeys, oldest first. */
  readonly passkeys: PasskeyResponseDto[];
}
