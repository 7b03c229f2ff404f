import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';
import {
  buildOpenApiDocument,
  type GuardRefusal,
  type OpenApiVariant,
} from '../../common/swagger/openapi-document.js';
import { ADMIN_API_MODULES } from './admin-api.module.js';
import { ADMIN_KEY_SCHEME } from '../../common/admin-route/admin-scope.decorator.js';

/** What AdminKeyGuard answers on every admin route besides the bare 401. */
const ADMIN_REFUSALS: readonly GuardRefusal[] = [
  {
    status: 404,
    description:
      'No admin key exists yet, or the admin API is served by the other listener ' +
      '(AdminApi__Listener): the route does not exist here.',
    messages: { notFound: STATUS_CODES[404] ?? 'Not Found' },
  },
];

/** The admin API's document, admin-openapi.json: its routes only, under the admin key scheme. */
export const ADMIN_OPENAPI_VARIANT: OpenApiVariant = {
  title: 'Keygate admin API',
  description:
    'Operate Keygate over HTTP: accounts, sessions and the audit trail, for back offices and ' +
    'support tools. Every route needs an admin API key with its scope (docs/operations/admin-api.md).',
  scheme: {
    name: ADMIN_KEY_SCHEME,
    format: 'kga_<43 base64url characters>',
    description:
      'An admin API key made by `npm run cli -- admin-keys:create`, sent as ' +
      '`Authorization: Bearer <key>`. Each route needs one scope of the key.',
  },
  modules: ADMIN_API_MODULES,
};

export function adminOpenApiDocumentOf(app: INestApplication): OpenAPIObject {
  return buildOpenApiDocument(app, ADMIN_REFUSALS, ADMIN_OPENAPI_VARIANT);
}
