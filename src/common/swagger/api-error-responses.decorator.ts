import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorResponseDto, ProblemDetailsResponseDto } from './error-response.schemas.js';
import {
  errorBodyExamples,
  VALIDATION_PROBLEM_EXAMPLES,
  type NamedMessages,
} from './error-examples.js';

const DESCRIPTIONS: Readonly<Record<number, string>> = {
  [HttpStatus.BAD_REQUEST]: 'The body failed validation (problem details).',
  [HttpStatus.UNAUTHORIZED]: 'Not authorized; the message says why.',
  [HttpStatus.NOT_FOUND]: 'Not found.',
  [HttpStatus.CONFLICT]: 'Conflicts with existing data.',
  [HttpStatus.SERVICE_UNAVAILABLE]:
    'A feature the request needs is not configured on this deployment.',
};

/** A failure together with the messages its error body can carry, named for the examples. */
export interface DocumentedFailure {
  readonly status: HttpStatus;
  /** Example name → message, taken from the module's `*.messages.ts`. */
  readonly messages: NamedMessages;
}

/**
 * Documents the error answers of a handler: a bare status, or a status with the messages its
 * error body can carry (one example each). A 400 is the validation pipe's problem details. The
 * answers every handler shares (500, and the guard's bare 401 on protected routes) are added by
 * buildOpenApiDocument.
 */
export function ApiErrorResponses(
  ...failures: ReadonlyArray<HttpStatus | DocumentedFailure>
): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorResponseDto, ProblemDetailsResponseDto),
    ...failures.map((failure) =>
      typeof failure === 'number'
        ? documentFailure(failure, {})
        : documentFailure(failure.status, failure.messages),
    ),
  );
}

function documentFailure(status: HttpStatus, messages: NamedMessages): MethodDecorator {
  const description = DESCRIPTIONS[status] ?? 'Error body.';
  const examples = errorBodyExamples(status, messages);
  const hasExamples = Object.keys(examples).length > 0;
  if (status === HttpStatus.BAD_REQUEST) {
    // The validation pipe's problem details; an InvalidArgumentError's message, when a handler
    // documents one, is the error body.
    const errorBody = { schema: { $ref: getSchemaPath(ErrorResponseDto) }, examples };
    return ApiResponse({
      status,
      description,
      content: {
        'application/problem+json': {
          schema: { $ref: getSchemaPath(ProblemDetailsResponseDto) },
          examples: VALIDATION_PROBLEM_EXAMPLES,
        },
        ...(hasExamples ? { 'application/json': errorBody } : {}),
      },
    });
  }
  return ApiResponse({
    status,
    description,
    type: ErrorResponseDto,
    ...(hasExamples ? { examples } : {}),
  });
}
