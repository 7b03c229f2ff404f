import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { HasNoControlCharacters, MaxChars, Trim } from '../../../common/validation/string-rules.js';
import { OAUTH_CLIENT_NAME_MAX_LENGTH } from '../../entities/oauth-client.entity.js';
import { MAX_REDIRECT_URIS, OAUTH_GRANT_TYPES, OAUTH_SCOPES } from '../../oauth-clients.service.js';
import { REDIRECT_URI_MAX_LENGTH } from '../../redirect-uris.js';

/** The body of `POST /api/admin/oauth/clients`. */
export class AddOAuthClientDto {
  /** Shown to people on the consent page, as text. */
  @Trim()
  @IsString()
  @MaxChars(OAUTH_CLIENT_NAME_MAX_LENGTH)
  @HasNoControlCharacters()
  readonly name: string;

  /**
   * The exact redirect URIs (https; http on loopback only; a native app's private scheme).
   * Required with the authorization code grant; a device or service client has none.
   */
  @ValidateIf((body: AddOAuthClientDto) => usesRedirects(body) || !isEmptyList(body.redirectUris))
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_REDIRECT_URIS)
  @IsString({ each: true })
  @MaxLength(REDIRECT_URI_MAX_LENGTH, { each: true })
  readonly redirectUris?: string[];

  /** Where RP-initiated logout may send the person back to, exactly. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_REDIRECT_URIS)
  @IsString({ each: true })
  @MaxLength(REDIRECT_URI_MAX_LENGTH, { each: true })
  readonly postLogoutRedirectUris?: string[];

  /** A native or browser application without a secret (PKCE required); default false. */
  @IsOptional()
  @IsBoolean()
  readonly public?: boolean;

  /** The scopes it may ask for; default all of them. */
  @ApiProperty({ required: false, type: [String], enum: OAUTH_SCOPES })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(OAUTH_SCOPES, { each: true })
  readonly scopes?: string[];

  /** The grants it may use; default `["authorization_code"]`. */
  @ApiProperty({ required: false, type: [String], enum: OAUTH_GRANT_TYPES })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(OAUTH_GRANT_TYPES, { each: true })
  readonly grantTypes?: string[];
}

/** Absent or `[]`: what a device or service client gives as redirect URIs. */
function isEmptyList(value: unknown): boolean {
  return value === undefined || (Array.isArray(value) && value.length === 0);
}

/** Whether the body registers the authorization code grant, which needs redirect URIs. */
function usesRedirects(body: AddOAuthClientDto): boolean {
  return !Array.isArray(body.grantTypes) || body.grantTypes.includes('authorization_code');
}

/** `{clientId}` of a client route. */
export class OAuthClientParamsDto {
  /** The client's id (a UUID). */
  @IsUUID()
  readonly clientId: string;
}

/** A client as operators see it: never its secret. */
export class OAuthClientResponseDto {
  @ApiProperty({ format: 'uuid' })
  readonly clientId: string;

  readonly name: string;

  readonly redirectUris: string[];

  readonly postLogoutRedirectUris: string[];

  readonly public: boolean;

  @ApiProperty({ type: [String], enum: OAUTH_SCOPES })
  readonly scopes: string[];

  @ApiProperty({ type: [String], enum: OAUTH_GRANT_TYPES })
  readonly grantTypes: string[];

  /** It registered itself (dynamic client registration): unverified, consent always asked. */
  readonly selfRegistered: boolean;

  @ApiProperty({ format: 'date-time' })
  readonly createdAt: string;
}

export class OAuthClientListResponseDto {
  @ApiProperty({ type: [OAuthClientResponseDto] })
  readonly clients: OAuthClientResponseDto[];
}

/** A new client's id, and a confidential one's secret: shown in this answer only, never again. */
export class AddedOAuthClientResponseDto {
  @ApiProperty({ format: 'uuid' })
  readonly clientId: string;

  /** `kgcs_…`, for confidential clients only. */
  readonly clientSecret?: string;
}

/** A confidential client's new secret; the previous one no longer works. */
export class RotatedOAuthClientSecretResponseDto {
  @ApiProperty({ format: 'uuid' })
  readonly clientId: string;

  readonly clientSecret: string;
}
