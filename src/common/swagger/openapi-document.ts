import type { INestApplication } from '@nestjs/common';
import { REQUIRES_SETTING_EXTENSION } from './requires-setting.decorator.js';
import { ModulesContainer } from '@nestjs/core';
import {
  DocumentBuilder,
  getSchemaPath,
  SwaggerModule,
  type ExamplesObject,
  type HeadersObject,
  type OpenAPIObject,
  type OperationObject,
  type ResponseObject,
  type ResponsesObject,
} from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';
import { INTERNAL_ERROR_MESSAGE } from '../errors/error-bodies.js';
import { BEARER_CHALLENGE, INVALID_TOKEN_CHALLENGE } from '../filters/bearer-challenge.js';
import {
  BEARER_REJECTED_EXAMPLES,
  errorBodyExamples,
  VALIDATION_PROBLEM_EXAMPLES,
  type NamedMessages,
} from './error-examples.js';
import { ErrorResponseDto, ProblemDetailsResponseDto } from './error-response.schemas.js';

/** The security scheme name that `@ApiBearerAuth()` uses when given none. */
export const BEARER_SCHEME = 'bearer';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * The methods whose body Fastify reads before any handler runs, whether or not the handler takes
 * one: a body-less POST still gets 400, 413 or 415 for a body it was sent. GET and HEAD bodies are
 * ignored.
 */
const BODY_READING_METHODS: ReadonlySet<HttpMethod> = new Set(['post', 'put', 'patch', 'delete']);

/** An answer the global guard gives on every protected route besides the bare 401. */
export interface GuardRefusal {
  readonly status: number;
  readonly description: string;
  readonly messages: NamedMessages;
}

/**
 * Which document to build: the interface's (the default), or another set of modules with its own
 * title and bearer scheme (the admin API's, admin-openapi.json). `modules` chooses the
 * controllers by module, as SwaggerModule's `include` does; `excludeModules` leaves some out.
 */
export interface OpenApiVariant {
  readonly title: string;
  readonly description: string;
  /** The bearer security scheme's name and how its tokens look. */
  readonly scheme: { readonly name: string; readonly format: string; readonly description: string };
  readonly modules?: readonly (abstract new (...args: never[]) => unknown)[];
  readonly excludeModules?: readonly (abstract new (...args: never[]) => unknown)[];
}

export const INTERFACE_VARIANT: OpenApiVariant = {
  title: 'Keygate',
  description:
    'Identity and token service: registration, login, rotating refresh tokens, revocation.',
  scheme: {
    name: BEARER_SCHEME,
    format: 'JWT',
    description:
      'The access token of an auth response (register, login or refresh), sent as ' +
      '`Authorization: Bearer <token>`.',
  },
};

/**
 * The OpenAPI document of the application: what the development server serves at /openapi.json
 * and what `npm run openapi` writes to openapi.json (or, with another `variant`, to
 * admin-openapi.json). Call it after configureApp(), which sets the global prefix the paths carry.
 */
export function buildOpenApiDocument(
  app: INestApplication,
  guardRefusals: readonly GuardRefusal[] = [],
  variant: OpenApiVariant = INTERFACE_VARIANT,
): OpenAPIObject {
  const include = modulesOf(app, variant);
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle(variant.title)
      .setDescription(variant.description)
      .setVersion('1.0')
      // Relative: the document describes whichever deployment serves it, and the development
      // Swagger UI calls the port it was loaded from.
      .addServer(
        '/',
        'The Keygate deployment this document is served by (paths are relative to it).',
      )
      .addBearerAuth(
        {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: variant.scheme.format,
          description: variant.scheme.description,
        },
        variant.scheme.name,
      )
      .build(),
    {
      extraModels: [ErrorResponseDto, ProblemDetailsResponseDto],
      // Handler names are the operations' names: `login`, `me`, `listSessions`.
      operationIdFactory: (_controllerKey, methodKey) => methodKey,
      ...(include === undefined ? {} : { include }),
    },
  );
  for (const path of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = path[method];
      if (operation !== undefined) {
        describeRequiredSetting(operation);
        documentSharedFailures(
          operation,
          BODY_READING_METHODS.has(method),
          guardRefusals,
          variant.scheme.name,
        );
      }
    }
  }
  dropEmptyRequiredLists(document);
  return document;
}

/**
 * Removes every `required: []` from the document's schemas. OpenAPI 3.0 (JSON Schema draft 4/5)
 * wants at least one name in a `required` list, and validators refuse an empty one, but the Swagger
 * CLI plugin writes one for every inline object type whose fields are all optional (in
 * @nestjs/swagger 12, `SchemaObjectFactory.createFromObjectLiteral` always sets the list, where
 * the class path leaves it out when empty): `{ a?: string }` in a DTO would otherwise make the
 * document invalid. Examples are data, not schemas, and are left as they are.
 */
function dropEmptyRequiredLists(node: unknown, key = ''): void {
  if (Array.isArray(node)) {
    for (const item of node) {
      dropEmptyRequiredLists(item);
    }
    return;
  }
  if (typeof node !== 'object' || node === null) {
    return;
  }
  const object = node as Record<string, unknown>;
  const inPropertyMap = key === 'properties';
  if (!inPropertyMap && Array.isArray(object.required) && object.required.length === 0) {
    delete object.required;
  }
  for (const [name, value] of Object.entries(object)) {
    if (inPropertyMap || !EXAMPLE_KEYS.has(name)) {
      dropEmptyRequiredLists(value, name);
    }
  }
}

/** Keys whose values are example data rather than parts of the document. */
const EXAMPLE_KEYS: ReadonlySet<string> = new Set(['example', 'examples', 'default', 'enum']);

/** The document as `npm run openapi` writes it: stable, readable, diff-friendly. */
export function serializeOpenApiDocument(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * Answers that come from global components rather than from a handler, so no handler declares
 * them: the filter turns any unexpected failure into a 500; the HTTP layer answers 408 to a
 * request that does not arrive in time; Fastify refuses a body that is too large (413), not
 * JSON (415) or malformed (400, problem details) before any handler runs, on every method that
 * reads one; and the global guard rejects a missing or invalid token,
 * and a token whose account is deactivated or deleted, on every route that is not @Public()
 * (those carry bearer security).
 */
function documentSharedFailures(
  operation: OperationObject,
  readsBody: boolean,
  guardRefusals: readonly GuardRefusal[],
  scheme: string,
): void {
  addErrorExamples(
    operation.responses,
    500,
    'Unexpected failure; details are only logged.',
    errorBodyExamples(500, { internalError: INTERNAL_ERROR_MESSAGE }),
  );
  addErrorExamples(
    operation.responses,
    408,
    'The request did not arrive whole within `Http__RequestTimeoutSeconds`; the connection is closed.',
    errorBodyExamples(408, { requestTimeout: STATUS_CODES[408] ?? '' }),
  );
  if (readsBody) {
    // A handler that takes a body declares its own 400, with the messages of its rules.
    operation.responses[400] ??= MALFORMED_BODY_RESPONSE;
    addErrorExamples(
      operation.responses,
      413,
      'The body is larger than 64 KiB.',
      errorBodyExamples(413, { payloadTooLarge: STATUS_CODES[413] ?? '' }),
    );
    addErrorExamples(
      operation.responses,
      415,
      'The body is not `application/json`.',
      errorBodyExamples(415, { unsupportedMediaType: STATUS_CODES[415] ?? '' }),
    );
  }
  const isProtected = (operation.security ?? []).some((requirement) => scheme in requirement);
  if (isProtected) {
    addErrorExamples(
      operation.responses,
      401,
      'Not authorized; the message says why.',
      BEARER_REJECTED_EXAMPLES,
      BEARER_CHALLENGE_HEADERS,
    );
    for (const { status, description, messages } of guardRefusals) {
      addErrorExamples(
        operation.responses,
        status,
        description,
        errorBodyExamples(status, messages),
      );
    }
  }
}

/**
 * An operation marked by @RequiresSetting exists only when its setting is configured: its
 * description opens by saying so, for the people who read the document (Swagger UI), while the
 * extension says it to tools.
 */
function describeRequiredSetting(operation: OperationObject): void {
  const setting: unknown = Object.getOwnPropertyDescriptor(
    operation,
    REQUIRES_SETTING_EXTENSION,
  )?.value;
  if (typeof setting !== 'string') {
    return;
  }
  const notice =
    `Available only when ${setting} is configured; without it this route does not exist ` +
    '(404, as any unknown path).';
  operation.description =
    operation.description === undefined ? notice : `${notice}\n\n${operation.description}`;
}

/** The modules whose controllers the variant documents; undefined: all of them. */
function modulesOf(
  app: INestApplication,
  variant: OpenApiVariant,
): (abstract new (...args: never[]) => unknown)[] | undefined {
  if (variant.modules !== undefined) {
    return [...variant.modules];
  }
  const excluded = variant.excludeModules ?? [];
  if (excluded.length === 0) {
    return undefined;
  }
  return [...app.get(ModulesContainer).values()]
    .map((module) => module.metatype as abstract new (...args: never[]) => unknown)
    .filter((metatype) => !excluded.includes(metatype));
}

/** The 400 of a body that is not a JSON object, on an operation that takes no body. */
const MALFORMED_BODY_RESPONSE: ResponseObject = {
  description: 'The body sent is not a JSON object (problem details).',
  content: {
    'application/problem+json': {
      schema: { $ref: getSchemaPath(ProblemDetailsResponseDto) },
      examples: VALIDATION_PROBLEM_EXAMPLES,
    },
  },
};

/** RFC 6750 §3, on the guard's `Unauthorized` answer. */
const BEARER_CHALLENGE_HEADERS: HeadersObject = {
  'WWW-Authenticate': {
    description:
      `On the bearer-token guard's \`Unauthorized\` answer: \`${BEARER_CHALLENGE}\` when the ` +
      `request carried no token, \`${INVALID_TOKEN_CHALLENGE}\` when the token it carried was ` +
      'refused (expired, ended session, bad signature, malformed).',
    schema: { type: 'string', example: INVALID_TOKEN_CHALLENGE },
  },
};

function addErrorExamples(
  responses: ResponsesObject,
  status: number,
  description: string,
  examples: ExamplesObject,
  headers?: HeadersObject,
): void {
  const declared = responses[status];
  const response: ResponseObject =
    declared !== undefined && !('$ref' in declared) ? declared : { description };
  const json = response.content?.['application/json'] ?? {
    schema: { $ref: getSchemaPath(ErrorResponseDto) },
  };
  responses[status] = {
    ...response,
    ...(headers === undefined ? {} : { headers: { ...response.headers, ...headers } }),
    content: {
      ...response.content,
      'application/json': { ...json, examples: { ...json.examples, ...examples } },
    },
  };
}
