/** Failures that services throw. Only `AllExceptionsFilter` turns them into HTTP answers. */
export abstract class DomainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The caller is not allowed: bad credentials, a locked or deactivated account, a bad token. */
export class UnauthorizedError extends DomainError {}

/** The operation conflicts with existing data. */
export class ConflictError extends DomainError {}

/** The thing asked for does not exist. */
export class NotFoundError extends DomainError {}

/** An argument is unacceptable in a way request validation cannot see. */
export class InvalidArgumentError extends DomainError {}

/** A feature the request needs is not available on this deployment (mail not configured). */
export class UnavailableError extends DomainError {}

/** The caller is known but may not do this: an admin API key outside its scopes. */
export class ForbiddenError extends DomainError {}
