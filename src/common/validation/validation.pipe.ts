import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { BODY_ERROR_KEY, BODY_NOT_AN_OBJECT_MESSAGE } from '../errors/error-bodies.js';
import { RequestValidationError } from '../errors/request-validation.error.js';

/**
 * A hand-written check of a DTO's body for a hot route: it returns the DTO that the full path
 * (class-transformer, then class-validator with `whitelist`) would return, or undefined whenever
 * it is not sure that path would accept the body. It never refuses anything: a body it does not
 * accept goes through the full path, which accepts it or gives the usual errors, so no answer
 * changes. A test compares it with the full path (see validation.pipe.spec.ts).
 */
export type AcceptedBody<T> = (body: Readonly<Record<string, unknown>>) => T | undefined;

const ACCEPTED_BODIES = new WeakMap<object, AcceptedBody<unknown>>();

/**
 * Class decorator: valid bodies of this DTO are accepted by `accept` without class-transformer
 * and class-validator, which cost about a tenth of a refresh's CPU
 * (docs/decisions/0029-request-path-layers.md). Only for DTOs whose rules are few and plain.
 */
export function AcceptsValidBodies<T>(accept: AcceptedBody<T>) {
  return (target: abstract new () => T): void => {
    ACCEPTED_BODIES.set(target, accept);
  };
}

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
    if (metadata.type === 'body' && metadata.metatype !== undefined) {
      const accepted = ACCEPTED_BODIES.get(metadata.metatype)?.(value as Record<string, unknown>);
      if (accepted !== undefined) {
        return accepted;
      }
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
