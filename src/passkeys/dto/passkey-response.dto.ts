import type { Passkey } from '../entities/passkey.entity.js';

export class PasskeyResponseDto {
  /** What PATCH and DELETE /api/auth/passkeys/{id} name. @example "0b7e3a52-5d2f-4c2e-9f7e-1c4b8f0d2a61" */
  readonly id: string;

  /** @example "Portátil del trabajo" */
  readonly name: string;

  /** ISO 8601 UTC. @example "2026-11-27T10:42:00.000Z" */
  readonly createdAt: string;

  /** ISO 8601 UTC; null until the passkey signs a first time after its registration. */
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
