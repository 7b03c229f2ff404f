import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional } from 'class-validator';
import { PublicKeyCredentialDto } from './public-key-credential.dto.js';
import { AUTHENTICATOR_TRANSPORTS, Base64UrlField, WEBAUTHN_LIMITS } from './webauthn-fields.js';

export class AuthenticatorAttestationResponseDto {
  /** base64url of the client data JSON. */
  @Base64UrlField(WEBAUTHN_LIMITS.clientDataJSON)
  readonly clientDataJSON: string;

  /** base64url of the CBOR attestation object. */
  @Base64UrlField(WEBAUTHN_LIMITS.attestationObject)
  readonly attestationObject: string;

  @IsOptional()
  @Base64UrlField(WEBAUTHN_LIMITS.authenticatorData)
  readonly authenticatorData?: string;

  /** How the browser can reach the authenticator again; stored to help later sign-ins. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(AUTHENTICATOR_TRANSPORTS.length)
  @IsIn(AUTHENTICATOR_TRANSPORTS, { each: true })
  readonly transports?: (typeof AUTHENTICATOR_TRANSPORTS)[number][];

  @IsOptional()
  @IsInt()
  readonly publicKeyAlgorithm?: number;

  @IsOptional()
  @Base64UrlField(WEBAUTHN_LIMITS.publicKey)
  readonly publicKey?: string;
}

/** A new credential as the browser's `PublicKeyCredential.toJSON()` writes it. */
export class RegistrationResponseDto extends PublicKeyCredentialDto {
  @Type(() => AuthenticatorAttestationResponseDto)
  declare readonly response: AuthenticatorAttestationResponseDto;
}
