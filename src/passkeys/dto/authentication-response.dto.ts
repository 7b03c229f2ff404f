import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, ValidateNested } from 'class-validator';
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
export class AuthenticationResponseDto {
  /** The credential id, base64url. */
  @Base64UrlField(WEBAUTHN_LIMITS.credentialId)
  readonly id: string;

  @Base64UrlField(WEBAUTHN_LIMITS.credentialId)
  readonly rawId: string;

  /** Always `public-key`. */
  @IsIn(['public-key'])
  readonly type: 'public-key';

  @IsObject()
  @ValidateNested()
  @Type(() => AuthenticatorAssertionResponseDto)
  readonly response: AuthenticatorAssertionResponseDto;

  @IsOptional()
  @IsIn(['platform', 'cross-platform'])
  readonly authenticatorAttachment?: 'platform' | 'cross-platform';

  /** Read by no check here: the service asks for no extension. */
  @IsOptional()
  @IsObject()
  readonly clientExtensionResults?: object;
}
