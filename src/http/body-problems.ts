import { MAX_BODY_DEPTH } from './strict-json.js';

/**
 * Reported under the key `$` of problem details when a body is not JSON, or is JSON this service
 * refuses. Validation messages, in English like class-validator's, not error-body texts: hence
 * not a `*.messages.ts` module.
 */
export const BodyMessages = {
  invalidUtf8: 'The request body is not valid UTF-8.',
  tooDeep: `The request body is nested more than ${MAX_BODY_DEPTH} levels deep.`,
  duplicateKey: 'The request body names the same key twice in one object.',
  loneSurrogate: 'The request body has a string with a lone UTF-16 surrogate.',
} as const;
