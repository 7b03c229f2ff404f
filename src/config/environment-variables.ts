import { Type } from 'class-transformer';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  Min,
  MinLength,
} from 'class-validator';

export const SAMPLE_SECRET_KEY =
  'keygate-sample-secret-replace-me-in-production-0123456789';
export const DEFAULT_ISSUER = 'keygate';
export const DEFAULT_AUDIENCE = 'keygate-clients';
export const DEFAULT_CONNECTION_STRING = 'Data Source=data/keygate.db';
/** OWASP Password Storage Cheat Sheet level for PBKDF2-HMAC-SHA256. */
export const OWASP_PBKDF2_SHA256_ITERATIONS = 600_000;

/**
 * The raw environment, one property per key, named exactly as the variable.
 * Defaults sit on the properties; `loadAppConfig` turns this into `AppConfig`.
 */
export class EnvironmentVariables {
  /** Only `development` turns on development mode; anything else, unset included, is production. */
  @IsOptional()
  @IsString()
  NODE_ENV?: string;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  @IsNotEmpty()
  HOST = '0.0.0.0';

  /** Left undefined here so that "not configured" can be told apart from the placeholder. */
  @IsOptional()
  @IsString()
  @MinLength(32)
  Jwt__SecretKey?: string;

  @IsString()
  @IsNotEmpty()
  Jwt__Issuer = DEFAULT_ISSUER;

  @IsString()
  @IsNotEmpty()
  Jwt__Audience = DEFAULT_AUDIENCE;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  Jwt__AccessTokenExpiryMinutes = 15;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  Jwt__RefreshTokenExpiryDays = 7;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(300)
  Jwt__ClockSkewSeconds = 0;

  @IsString()
  @IsNotEmpty()
  ConnectionStrings__DefaultConnection = DEFAULT_CONNECTION_STRING;

  @Type(() => Number)
  @IsInt()
  @Min(1000)
  PasswordHashing__Iterations = OWASP_PBKDF2_SHA256_ITERATIONS;
}
