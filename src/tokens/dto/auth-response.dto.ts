import { UserResponseDto } from '../../users/dto/user-response.dto.js';

/** Spec §2.3: returned by register, login and refresh. */
export class AuthResponseDto {
  /** HS256 JWT; send it as `Authorization: Bearer <token>`. */
  readonly accessToken: string;

  /** Opaque; exchange it at `/api/auth/refresh`. Each use replaces it. */
  readonly refreshToken: string;

  /** When the access token expires (its `exp`), ISO 8601 UTC. */
  readonly accessTokenExpiry: string;

  readonly user: UserResponseDto;
}
