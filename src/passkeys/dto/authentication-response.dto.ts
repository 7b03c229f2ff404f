import { Type } from 'class-transformer';
import { IsOptional } from 'class-validator';
import { PublicKeyCredentialDto } from './public-key-credential.dto.js';
import { Base64UrlField, WEBAUTHN_LIMITS } from './webauthn-fields.js';

export class AuthenticatorAssertionResponseDto {
  /** base64url of the client data JSON. */
  @Base64UrlField(WEBAUTHN_LIMITS.clientDataJSON)
  readonly clientDataJSON: string;

  /** base64url of the authenticator data. */
  @Base64UrlField(WEBAUTHN_LIMITS.authenticatorData)
  readonly authenticatorData: string;

  /** base64url of the signature over the authenticator data and the client data's hash. */
  @Base64UrlField(WEBAUTHN_LIMITS.signature)
  readonly signature: string;

  /** base64url of the account's user handle, which a discoverable passkey returns. */
  @IsOptional()
  @Base64UrlField(WEBAUTHN_LIMITS.userHandle)
  readonly userHandle?: string | null;
}

/** An assertion as the browser's `PublicKeyCredential.toJSON()` writes it. */
export class AuthenticationResponseDto extends PublicKeyCredentialDto {
  @Type(() => AuthenticatorAssertionResponseDto)
  declare readonly response: AuthenticatorAssertionResponseDto;
}
