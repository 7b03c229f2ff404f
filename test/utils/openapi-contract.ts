import type {
  ExampleObject,
  MediaTypeObject,
  OpenAPIObject,
  OperationObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';

/** The HTTP methods an OpenAPI path item can hold, lower case as the document writes them. */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface DocumentedOperation {
  /** `POST /api/auth/login`: upper-case method, OpenAPI path (`{param}`). */
  readonly route: string;
  readonly operation: OperationObject;
}

export interface DocumentedResponse {
  readonly status: string;
  readonly response: ResponseObject;
}

export interface DocumentedExample {
  readonly status: string;
  readonly mediaType: string;
  readonly schema: SchemaObject | ReferenceObject | undefined;
  readonly value: unknown;
}

export function listOperations(document: OpenAPIObject): DocumentedOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item[method];
      return operation === undefined
        ? []
        : [{ route: `${method.toUpperCase()} ${path}`, operation }];
    }),
  );
}

export function listResponses(operation: OperationObject): DocumentedResponse[] {
  return Object.entries(operation.responses).flatMap(([status, response]) =>
    response === undefined || '$ref' in response ? [] : [{ status, response }],
  );
}

export function listExamples(operation: OperationObject): DocumentedExample[] {
  return listResponses(operation).flatMap(({ status, response }) =>
    Object.entries(response.content ?? {}).flatMap(
      ([mediaType, media]: [string, MediaTypeObject]) =>
        Object.values(media.examples ?? {})
          .filter((example): example is ExampleObject => !('$ref' in example))
          .map((example) => ({ status, mediaType, schema: media.schema, value: example.value })),
    ),
  );
}

/** The human-readable text of an example body: an error body's `message`, problem details' `title`. */
export function exampleText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const text = 'message' in value ? value.message : 'title' in value ? value.title : undefined;
  return typeof text === 'string' ? text : undefined;
}

/** `#/components/schemas/ErrorResponseDto` → `ErrorResponseDto`; undefined for inline schemas. */
export function schemaName(schema: SchemaObject | ReferenceObject | undefined): string | undefined {
  return schema !== undefined && '$ref' in schema
    ? schema.$ref.replace('#/components/schemas/', '')
    : undefined;
}

/**
 * Why `value` is not an instance of `schema`, or an empty list. Covers what this document uses:
 * references, objects (properties, required, additionalProperties), arrays, scalar types and
 * `nullable`.
 */
export function schemaViolations(
  document: OpenAPIObject,
  schema: SchemaObject | ReferenceObject,
  value: unknown,
  at = '$',
): string[] {
  if ('$ref' in schema) {
    const target = document.components?.schemas?.[schemaName(schema) ?? ''];
    return target === undefined
      ? [`${at}: unknown schema ${schema.$ref}`]
      : schemaViolations(document, target, value, at);
  }
  if (value === null && schema.nullable === true) {
    return [];
  }
  const type = typeof schema.type === 'string' ? schema.type : String(schema.type);
  switch (type) {
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return [`${at}: not an object`];
      }
      const record = value as Record<string, unknown>;
      const properties = schema.properties ?? {};
      const missing = (schema.required ?? [])
        .filter((key) => !(key in record))
        .map((key) => `${at}.${key}: required but missing`);
      const checked = Object.entries(record).flatMap(([key, item]) => {
        const property = properties[key] ?? schema.additionalProperties;
        if (property === undefined || typeof property === 'boolean') {
          return property === true ? [] : [`${at}.${key}: not in the schema`];
        }
        return schemaViolations(document, property, item, `${at}.${key}`);
      });
      return [...missing, ...checked];
    }
    case 'array': {
      const items = schema.items;
      return Array.isArray(value) && items !== undefined
        ? value.flatMap((item, index) => schemaViolations(document, items, item, `${at}[${index}]`))
        : [`${at}: not an array`];
    }
    case 'integer':
      return Number.isInteger(value) ? [] : [`${at}: not an integer`];
    case 'number':
      return typeof value === 'number' ? [] : [`${at}: not a number`];
    case 'string':
      return typeof value === 'string' ? [] : [`${at}: not a string`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${at}: not a boolean`];
    default:
      return [`${at}: schema type ${type} is not checked here`];
  }
}
