import type { FastifyInstance } from 'fastify';
import { BODY_ERROR_KEY, BODY_NOT_AN_OBJECT_MESSAGE } from '../common/errors/error-bodies.js';
import { RequestValidationError } from '../common/errors/request-validation.error.js';
import { BodyMessages } from './body-problems.js';
import { jsonShapeProblem } from './strict-json.js';

type Done = (error: Error | null, body?: unknown) => void;

/** `fatal`: bytes that are not UTF-8 are refused, never turned into U+FFFD. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Replaces Fastify's `application/json` parser with one that reads the body as bytes and refuses,
 * as 400 problem details under the key `$`: bytes that are not UTF-8, text that is not JSON (or
 * has a `__proto__` or `constructor.prototype` key: Fastify's own parser still decides that),
 * and JSON this service does not accept (see jsonShapeProblem). Every later layer then only sees
 * bodies whose every string is what the client sent.
 */
export function useStrictJsonBodies(fastify: FastifyInstance): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (request, body: Buffer, done: Done) => {
      let text: string;
      try {
        text = UTF8.decode(body);
      } catch {
        done(refused(BodyMessages.invalidUtf8));
        return;
      }
      void parseJson(request, text, (error: Error | null, value?: unknown) => {
        if (error !== null) {
          done(refused(BODY_NOT_AN_OBJECT_MESSAGE));
          return;
        }
        const problem = jsonShapeProblem(text);
        done(problem === null ? null : refused(BodyMessages[problem]), value);
      });
    },
  );
}

function refused(message: string): RequestValidationError {
  return new RequestValidationError({ [BODY_ERROR_KEY]: [message] });
}
