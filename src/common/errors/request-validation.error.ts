/** A request body failed validation: field name mapped to its messages. */
export class RequestValidationError extends Error {
  constructor(readonly errors: Readonly<Record<string, readonly string[]>>) {
    super('One or more validation errors occurred.');
    this.name = 'RequestValidationError';
  }
}
