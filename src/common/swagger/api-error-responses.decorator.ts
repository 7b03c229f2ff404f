import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiExtraModels, ApiResponse } from '@nestjs/swagger';
import { ErrorResponseDto, ProblemDetailsResponseDto } from './error-response.schemas.js';

const DESCRIPTIONS: Readonly<Record<number, string>> = {
  [HttpStatus.BAD_REQUEST]: 'The body failed validation (problem details).',
  [HttpStatus.UNAUTHORIZED]: 'Not authorized; the message says why.',
  [HttpStatus.NOT_FOUND]: 'Not found.',
  [HttpStatus.CONFLICT]: 'Conflicts with existing data.',
};

/** Documents the error answers of a handler; every handler can also answer 500. */
export function ApiErrorResponses(...statuses: HttpStatus[]): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorResponseDto, ProblemDetailsResponseDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: DESCRIPTIONS[status],
        type: status === HttpStatus.BAD_REQUEST ? ProblemDetailsResponseDto : ErrorResponseDto,
      }),
    ),
    ApiResponse({
      status: HttpStatus.INTERNAL_SERVER_ERROR,
      description: 'Unexpected failure: `Ocurrió un error interno.`',
      type: ErrorResponseDto,
    }),
  );
}
