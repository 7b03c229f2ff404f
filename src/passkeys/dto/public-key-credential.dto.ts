import { IsIn, IsObject, IsOptional, ValidateNested } from 'class-validator';
import { Base64UrlField, WEBAUTHN_LIMITS } from './webauthn-fields.js';

/**
 * The envelope `PublicKeyCredential.toJSON()` writes around both ceremonies' answers. A subclass
 * narrows `response` to its ceremony's body and names the class to build it as (`@Type`); the
 * field is declared here so that every field keeps its place in validation errors and the
 * contract.
 */
export class PublicKeyCredentialDto {
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
  readonly response: object;

  @IsOptional()
  @IsIn(['platform', 'cross-platform'])
  readonly authenticatorAttachment?: 'platform' | 'cross-platform';

  /** Read by no check here: the service asks for no extension. */
  @IsOptional()
  @IsObject()
  readonly clientExtensionResults?: object;
}
