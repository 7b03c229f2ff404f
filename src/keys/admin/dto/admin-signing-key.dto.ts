import { MaxLength, Matches } from 'class-validator';
import type { SigningKeyResponseDto } from '../../dto/signing-key-response.dto.js';

/** `{kid}` of a signing-key route: a JWK thumbprint (base64url) or an HS256 secret's id. */
export class AdminSigningKeyParamsDto {
  /** The key's `kid`, as `GET /api/admin/keys` lists it. */
  @MaxLength(128)
  @Matches(/^[A-Za-z0-9_-]+$/)
  readonly kid: string;
}

/** The key set as operators see it: never any key material. */
export class AdminSigningKeyListResponseDto {
  /** Newest activation first, then Jwt__SecretKey and Jwt__PreviousSecretKeys. */
  readonly keys: SigningKeyResponseDto[];
}
