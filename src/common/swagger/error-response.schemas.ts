import { ApiProperty } from '@nestjs/swagger';

/** Spec §2.4, documented for OpenAPI. */
export class ErrorResponseDto {
  @ApiProperty({ type: 'integer', example: 401 })
  readonly status: number;

  @ApiProperty({ example: 'Credenciales inválidas.' })
  readonly message: string;

  @ApiProperty({ example: '2026-01-01T00:00:00.000Z', format: 'date-time', required: false })
  readonly timestamp?: string;
}

/** Spec §7, the body of a request that fails validation. */
export class ProblemDetailsResponseDto {
  @ApiProperty({ example: 'https://tools.ietf.org/html/rfc9110#section-15.5.1' })
  readonly type: string;

  @ApiProperty({ example: 'One or more validation errors occurred.' })
  readonly title: string;

  @ApiProperty({ type: 'integer', example: 400 })
  readonly status: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { email: ['email must be an email'] },
  })
  readonly errors: Record<string, string[]>;
}
