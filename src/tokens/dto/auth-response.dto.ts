import { ApiProperty } from '@nestjs/swagger';
import { USER_RESPONSE_EXAMPLE, UserResponseDto } from '../../users/dto/user-response.dto.js';

/**
 * A real pair's shape: a token signed (with a secret used nowhere else) for the example user,
 * whose `sid` is the example session, issued at 09:00 and valid 15 minutes.
 */
export const AUTH_RESPONSE_EXAMPLE = {
  accessToken:
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6IjFIcmhvQjI1RWszdncwQkUifQ.' +
    'eyJzdWIiOiIzZjI1MDRlMC00Zjg5LTQxZDMtOWEwYy0wMzA1ZTgyYzMzMDEiLCJzaWQiOiI5YjJkNmY3ZS0xYzFhLTRj' +
    'NTUtOGYzZS0yZjdiMGQxZTZhMTEiLCJlbWFpbCI6ImFsaWNlQGV4YW1wbGUuY29tIiwianRpIjoiNWIxYzdhNTItM2Qw' +
    'ZS00ZjNhLTlhNDctMGI4ZTJjNmQxZjkwIiwiaWF0IjoxNzY3MjU4MDAwLCJleHAiOjE3NjcyNTg5MDAsImlzcyI6Imtl' +
    'eWdhdGUiLCJhdWQiOiJrZXlnYXRlLWNsaWVudHMifQ.KBDZm0dBqvcoigDLuFgmO78XUudEuXWTfXGkam604G4',
  refreshToken: 'kq3V0S2yq8m1bZcR5x0G6uUj4tQnH7wEoLdP9aFsYiM',
  accessTokenExpiry: '2026-01-01T09:15:00.000Z',
  user: USER_RESPONSE_EXAMPLE,
} as const satisfies AuthResponseDto;

/** Spec §2.3: returned by register, login and refresh. */
export class AuthResponseDto {
  /** HS256 JWT; send it as `Authorization: Bearer <token>`. */
  @ApiProperty({ example: AUTH_RESPONSE_EXAMPLE.accessToken })
  readonly accessToken: string;

  /** Opaque; exchange it at `/api/auth/refresh`. Each use replaces it. */
  @ApiProperty({ example: AUTH_RESPONSE_EXAMPLE.refreshToken })
  readonly refreshToken: string;

  /** When the access token expires (its `exp`), ISO 8601 UTC. */
  @ApiProperty({ format: 'date-time', example: AUTH_RESPONSE_EXAMPLE.accessTokenExpiry })
  readonly accessTokenExpiry: string;

  @ApiProperty()
  readonly user: UserResponseDto;
}
