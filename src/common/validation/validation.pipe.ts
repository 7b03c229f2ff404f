import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { BODY_ERROR_KEY, BODY_NOT_AN_OBJECT_MESSAGE } from '../errors/error-bodies.js';
import { RequestValidationError } from '../errors/request-validation.error.js';

/**
 * The global pipe: strips unknown properties, converts to DTO classes, and reports every failing
 * field as a `RequestValidationError`. It never builds a response body.
 */
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      transform: true,
      forbidUnknownValues: true,
      stopAtFirstError: false,
      validationError: { target: false, value: false },
      exceptionFactory: (errors: ValidationError[]) =>
        new RequestValidationError(collectMessages(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // Spec §7: a body that is absent, an array or a scalar is a validation failure, not a 500.
    if (metadata.type === 'body' && !isPlainObject(value)) {
      throw new RequestValidationError({ [BODY_ERROR_KEY]: [BODY_NOT_AN_OBJECT_MESSAGE] });
    }
    return super.transform(value, metadata);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return false;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function collectMessages(
  errors: readonly ValidationError[],
  parent = '',
  into: Record<string, string[]> = {},
): Record<string, string[]> {
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const messages = Object.values(error.constraints ?? {});
    if (messages.length > 0) {
      (into[field] ??= []).push(...messages);
    }
    collectMessages(error.children ?? [], field, into);
  }
  return into;
}
