import type { ExamplesObject } from '@nestjs/swagger';
import {
  BODY_ERROR_KEY,
  BODY_NOT_AN_OBJECT_MESSAGE,
  UNAUTHORIZED_MESSAGE,
  VALIDATION_PROBLEM_TITLE,
  VALIDATION_PROBLEM_TYPE,
} from '../errors/error-bodies.js';

/** The instant every documented error body shows, so the document does not change per build. */
export const EXAMPLE_TIMESTAMP = '2026-01-01T00:00:00.000Z';

/** Example name → message text: one documented example per message a response can carry. */
export type NamedMessages = Readonly<Record<string, string>>;

/** Examples of the error body (SPEC §2.4), one per message. */
export function errorBodyExamples(status: number, messages: NamedMessages): ExamplesObject {
  return Object.fromEntries(
    Object.entries(messages).map(([name, message]) => [
      name,
      { summary: message, value: { status, message, timestamp: EXAMPLE_TIMESTAMP } },
    ]),
  );
}

/** SPEC §7: the guard's answer to a missing or invalid bearer token has no timestamp. */
export const BEARER_REJECTED_EXAMPLES: ExamplesObject = {
  missingOrInvalidToken: {
    summary: 'Missing or invalid access token',
    value: { status: 401, message: UNAUTHORIZED_MESSAGE },
  },
};

export const VALIDATION_PROBLEM_EXAMPLES: ExamplesObject = {
  validationFailed: {
    summary: VALIDATION_PROBLEM_TITLE,
    value: {
      type: VALIDATION_PROBLEM_TYPE,
      title: VALIDATION_PROBLEM_TITLE,
      status: 400,
      errors: { [BODY_ERROR_KEY]: [BODY_NOT_AN_OBJECT_MESSAGE] },
    },
  },
};
