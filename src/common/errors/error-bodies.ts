/** The uniform error body of SPEC §2.4. */
export interface ErrorBody {
  readonly status: number;
  readonly message: string;
  readonly timestamp?: string;
}

/** The problem-details body of SPEC §7 for requests that fail validation. */
export interface ProblemDetailsBody {
  readonly type: string;
  readonly title: string;
  readonly status: 400;
  readonly errors: Readonly<Record<string, readonly string[]>>;
}

/** The content type of every error body. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The error body of a failure at `now`. */
export function errorBodyAt(status: number, message: string, now: Date): ErrorBody {
  return { status, message, timestamp: now.toISOString() };
}

export const VALIDATION_PROBLEM_TYPE = 'https://tools.ietf.org/html/rfc9110#section-15.5.1';
export const VALIDATION_PROBLEM_TITLE = 'One or more validation errors occurred.';
export const INTERNAL_ERROR_MESSAGE = 'Ocurrió un error interno.';
export const UNAUTHORIZED_MESSAGE = 'Unauthorized';
/** The `errors` key for a failure of the body as a whole rather than of one field. */
export const BODY_ERROR_KEY = '$';
/**
 * Reported under BODY_ERROR_KEY when the body is not a JSON object: absent, malformed, an array
 * or a scalar.
 */
export const BODY_NOT_AN_OBJECT_MESSAGE = 'The request body must be a JSON object.';
