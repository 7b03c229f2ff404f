import type { KeySource } from '../entities/signing-key.entity.js';
import type { KeyState } from '../key-states.js';

/** A key of the key set as operators see it: never any key material. */
export class SigningKeyResponseDto {
  /** The `kid` tokens carry: a JWK thumbprint, or for an HS256 secret its 16-character id. */
  readonly kid: string;

  /** ES256, EdDSA, RS256, or HS256 for a secret. */
  readonly algorithm: string;

  /** generated, imported, or secret (Jwt__SecretKey or Jwt__PreviousSecretKeys). */
  readonly source: KeySource;

  /** next, current, previous or retired, at the time of the answer. */
  readonly state: KeyState;

  /** ISO 8601 UTC; null for a secret. */
  readonly createdAt: string | null;

  /** When it starts (or started) signing; null for a secret. */
  readonly activatesAt: string | null;

  /** When an operator retired it; null if none did. */
  readonly retiredAt: string | null;
}
