import type { OpenAPIObject } from '@nestjs/swagger';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, promisify } from 'node:util';
import {
  INTERNAL_ERROR_MESSAGE,
  UNAUTHORIZED_MESSAGE,
  VALIDATION_PROBLEM_TITLE,
} from '../src/common/errors/error-bodies.js';
import { registerUser } from './factories/user.factory.js';
import { useSharedTestApp } from './utils/create-test-app.js';
import { startDevelopmentServer } from './utils/development-server.js';
import { UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { asymmetricSigning } from './utils/signing-keys.js';
import { httpRequest } from './utils/http.js';
import {
  exampleText,
  listExamples,
  listOperations,
  listResponses,
  schemaName,
  schemaViolations,
} from './utils/openapi-contract.js';
import type { RegisteredRoute } from './utils/route-table.js';

// The contract, openapi.json, against the code: it must be what the code generates now, list
// every route the application registers with the right method and security, and show every
// message a response can carry as an example. After changing an endpoint, run `npm run openapi`.

const run = promisify(execFile);
const CONTRACT_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));
/** Built by `nest build` (npm test builds first), with the Swagger CLI plugin that ts-jest lacks. */
const GENERATOR = fileURLToPath(new URL('../dist/openapi.js', import.meta.url));
const SOURCES = fileURLToPath(new URL('../src/', import.meta.url));
/** A build of the app, or a start of the real process, on a busy machine. */
const PROCESS_TEST_TIMEOUT_MS = 30_000;

const committedText = readFileSync(CONTRACT_FILE, 'utf8');
const contract = JSON.parse(committedText) as OpenAPIObject;
const operations = listOperations(contract);

/**
 * The admin CLI's texts (its commands' and its admin-keys commands') go to an operator's
 * terminal, never into an HTTP answer of this document. The key set's and the webhooks' refusals
 * (KeysService, WebhooksService) and the admin route contract's (common/admin-route: the 403 of
 * a key without the scope) answer only on admin routes (or, for an import, only in the
 * terminal): the admin API's texts are in admin-openapi.json.
 */
const CLI_ONLY =
  /^(admin[/\\]|common[/\\]admin-route[/\\]|keys[/\\]keys\.messages\.ts$|webhooks[/\\]webhooks\.messages\.ts$)/;

/**
 * Sign-in through other providers (issue 38) exists only with Federation__Providers, the
 * person's consents to applications (issue 39) only with OAuthServer__Enabled; the contract
 * documents their routes, each marked with its setting (`x-keygate-requires`). The apps these
 * tests start have both set (a GitHub-shaped provider no test reaches, an issuer no test names),
 * so their routes are the contract's.
 */
/**
 * The OpenID provider's texts are its hosted pages' (HTML, not this document's) and its admin
 * routes' (admin-openapi.json); the one its person's routes answer is in
 * OAUTH_GRANTS_RESPONSE_TEXTS.
 */
const PROVIDER_TEXTS = /^oauth-server[/\\]/;

const OPT_IN_ENVIRONMENT: Readonly<Record<string, string>> = {
  ...asymmetricSigning('ES256', {
    OAuthServer__Enabled: 'true',
    OAuthServer__Issuer: 'https://keygate.example.com',
  }),
  Federation__Providers: JSON.stringify([
    { id: 'github', name: 'GitHub', type: 'github', clientId: 'keygate', clientSecret: 'unused' },
  ]),
  Federation__PublicUrl: 'https://keygate.example.com',
  Federation__RedirectUrls: 'https://app.example.com/signed-in',
};

const ERROR_SCHEMA = 'ErrorResponseDto';
const PROBLEM_SCHEMA = 'ProblemDetailsResponseDto';
/** Which schema each failure media type must reference. */
const FAILURE_SCHEMAS: Readonly<Record<string, string>> = {
  'application/json': ERROR_SCHEMA,
  'application/problem+json': PROBLEM_SCHEMA,
};

/**
 * A health probe's 503 is terminus's own result body (`{status, info, error, details}`), the shape
 * load balancers and orchestrators read; every other failure of a probe is the error body.
 */
function isHealthProbeVerdict(route: string, status: string): boolean {
  return route.startsWith('GET /health/') && status === '503';
}

/**
 * The response texts of the code: every string in the `*.messages.ts` modules under src (the admin
 * CLI's aside), except keys ending in `Reason`, which are stored as a token's revocation reason and never sent; plus
 * the texts of the filter and the validation pipe. A function is a template: its number becomes
 * `\d+`.
 */
const RESPONSE_TEXTS: ReadonlyArray<{ readonly text: string; readonly pattern: RegExp }> = [
  ...(await messagesOfModules()),
  INTERNAL_ERROR_MESSAGE,
  UNAUTHORIZED_MESSAGE,
  VALIDATION_PROBLEM_TITLE,
].map((message) =>
  typeof message === 'string' ? { text: message, pattern: exactly(message) } : message,
);

const PROBLEM = 'One or more validation errors occurred.';
const INTERNAL = 'Ocurrió un error interno.';
/** The HTTP layer answers a request that does not arrive in time, on every route. */
const LATE = { 408: ['Request Timeout'] };
/** The methods whose body Fastify reads, whether or not the handler takes one; it ignores GET's. */
const BODY_READING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Fastify refuses these bodies before any handler runs (docs/behaviour.md). */
const BODY_REFUSALS = { ...LATE, 413: ['Payload Too Large'], 415: ['Unsupported Media Type'] };
const DEACTIVATED = 'Cuenta desactivada.';
const REFRESH_INVALID = 'Refresh token inválido.';
const INVALID_CREDENTIALS = 'Credenciales inválidas.';
const LOCKED_OUT = 'Cuenta bloqueada temporalmente. Intenta en 15 minuto(s).';
/** Only with Auth__RequireVerifiedEmail (opt-in). */
const NOT_VERIFIED = 'Email no verificado.';
const UNAUTHORIZED = 'Unauthorized';
const NOT_FOUND = 'Usuario no encontrado.';
const EMAIL_TAKEN = 'Ya existe una cuenta con ese email.';
const TOKEN_INVALID = 'Token inválido o expirado.';
const MAIL_OFF = 'El envío de correos no está configurado.';
/** The second factor (beyond the interface). */
const CODE_REQUIRED = 'Se requiere el código de verificación.';
const INVALID_CODE = 'Código de verificación inválido.';
const MFA_OFF = 'La verificación en dos pasos no está configurada.';
/** The refusals of a route that asks for the password again. */
const PASSWORD_REFUSALS = [INVALID_CREDENTIALS, DEACTIVATED, LOCKED_OUT, UNAUTHORIZED];

/**
 * SPEC §4.2 and §7 (and docs/behaviour.md): which texts each endpoint answers with, per
 * status, written out literally so that a typo in a constant fails here.
 */
const SPEC_RESPONSE_TEXTS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  'POST /api/auth/register': {
    ...BODY_REFUSALS,
    400: [PROBLEM],
    409: ['Ya existe una cuenta con ese email.'],
    500: [INTERNAL],
  },
  'POST /api/auth/login': {
    ...BODY_REFUSALS,
    400: [PROBLEM],
    401: [INVALID_CREDENTIALS, DEACTIVATED, LOCKED_OUT, NOT_VERIFIED, CODE_REQUIRED, INVALID_CODE],
    500: [INTERNAL],
    503: [MFA_OFF],
  },
  'POST /api/auth/refresh': {
    ...BODY_REFUSALS,
    400: [PROBLEM],
    401: [
      REFRESH_INVALID,
      'Refresh token revocado.',
      'Refresh token expirado.',
      DEACTIVATED,
      NOT_VERIFIED,
    ],
    500: [INTERNAL],
  },
  'POST /api/auth/revoke': {
    ...BODY_REFUSALS,
    200: ['Token revocado exitosamente.'],
    400: [PROBLEM],
    // The guard answers for the token's account on every protected route, as `me` does.
    401: [REFRESH_INVALID, 'Unauthorized', DEACTIVATED],
    404: ['Usuario no encontrado.'],
    500: [INTERNAL],
  },
  'GET /api/auth/me': {
    ...LATE,
    401: [DEACTIVATED, 'Unauthorized'],
    404: ['Usuario no encontrado.'],
    500: [INTERNAL],
  },
  // The account routes (additions, docs/api.md).
  'POST /api/auth/password/change': {
    ...BODY_REFUSALS,
    200: ['Contraseña actualizada exitosamente.'],
    400: [PROBLEM, 'La nueva contraseña debe ser distinta de la actual.'],
    401: PASSWORD_REFUSALS,
    404: [NOT_FOUND],
    500: [INTERNAL],
  },
  'POST /api/auth/password/forgot': {
    ...BODY_REFUSALS,
    202: [
      'Si existe una cuenta con ese email, recibirás un enlace para restablecer la contraseña.',
    ],
    400: [PROBLEM],
    500: [INTERNAL],
    503: [MAIL_OFF],
  },
  'POST /api/auth/password/reset': {
    ...BODY_REFUSALS,
    200: ['Contraseña restablecida exitosamente.'],
    400: [PROBLEM, TOKEN_INVALID],
    401: [DEACTIVATED],
    500: [INTERNAL],
  },
  'POST /api/auth/email/verify': {
    ...BODY_REFUSALS,
    200: ['Email verificado exitosamente.', 'Email actualizado exitosamente.'],
    400: [PROBLEM, TOKEN_INVALID],
    401: [DEACTIVATED],
    409: [EMAIL_TAKEN],
    500: [INTERNAL],
  },
  'POST /api/auth/email/verify/resend': {
    // It takes no body, but Fastify reads one sent to a POST: refused as on the other routes.
    ...BODY_REFUSALS,
    202: ['Te enviaremos un enlace de verificación.'],
    400: [PROBLEM],
    401: [DEACTIVATED, UNAUTHORIZED],
    404: [NOT_FOUND],
    409: ['El email ya está verificado.'],
    500: [INTERNAL],
    503: [MAIL_OFF],
  },
  'POST /api/auth/email/change': {
    ...BODY_REFUSALS,
    202: ['Te enviaremos un enlace de confirmación a la nueva dirección.'],
    400: [PROBLEM, 'El nuevo email es igual al actual.'],
    401: PASSWORD_REFUSALS,
    404: [NOT_FOUND],
    409: [EMAIL_TAKEN],
    500: [INTERNAL],
    503: [MAIL_OFF],
  },
  'DELETE /api/auth/me': {
    ...BODY_REFUSALS,
    200: ['Cuenta eliminada exitosamente.'],
    400: [PROBLEM],
    401: PASSWORD_REFUSALS,
    404: [NOT_FOUND],
    500: [INTERNAL],
  },
  'POST /api/auth/mfa/totp/enroll': {
    ...BODY_REFUSALS,
    400: [PROBLEM],
    401: PASSWORD_REFUSALS,
    404: [NOT_FOUND],
    409: ['La verificación en dos pasos ya está activada.'],
    500: [INTERNAL],
    503: [MFA_OFF],
  },
  'POST /api/auth/mfa/totp/confirm': {
    ...BODY_REFUSALS,
    400: [PROBLEM],
    401: [INVALID_CODE, DEACTIVATED, LOCKED_OUT, UNAUTHORIZED],
    404: [NOT_FOUND],
    409: ['No hay una verificación en dos pasos pendiente de confirmar.'],
    500: [INTERNAL],
    503: [MFA_OFF],
  },
  'POST /api/auth/mfa/totp/recovery-codes': {
    ...BODY_REFUSALS,
    400: [PROBLEM],
    401: [INVALID_CODE, DEACTIVATED, LOCKED_OUT, UNAUTHORIZED],
    404: [NOT_FOUND],
    409: ['La verificación en dos pasos no está activada.'],
    500: [INTERNAL],
    503: [MFA_OFF],
  },
  'POST /api/auth/mfa/totp/disable': {
    ...BODY_REFUSALS,
    200: ['Verificación en dos pasos desactivada.'],
    400: [PROBLEM],
    401: [...PASSWORD_REFUSALS, INVALID_CODE],
    404: [NOT_FOUND],
    409: ['La verificación en dos pasos no está activada.'],
    500: [INTERNAL],
    503: [MFA_OFF],
  },
};

const FEDERATION_CODE_INVALID = 'Código de inicio de sesión inválido o expirado.';
const UNKNOWN_PROVIDER = 'Proveedor de identidad no encontrado.';
const REDIRECT_NOT_ALLOWED = 'La URL de retorno no está permitida.';
const PROVIDER_UNAVAILABLE = 'El proveedor de identidad no responde. Intenta más tarde.';

/**
 * Sign-in through other providers (issue 38, docs/federation.md): the texts of its routes, per
 * status. Its token exchange answers as login does, with a passkey's refusals as well.
 */
const FEDERATION_RESPONSE_TEXTS: Readonly<
  Record<string, Readonly<Record<string, readonly string[]>>>
> = {
  'GET /api/auth/federation/providers': { ...LATE, 500: [INTERNAL] },
  'GET /api/auth/federation/{provider}/authorize': {
    ...LATE,
    400: [PROBLEM, REDIRECT_NOT_ALLOWED],
    404: [UNKNOWN_PROVIDER],
    500: [INTERNAL],
    503: [PROVIDER_UNAVAILABLE],
  },
  'GET /api/auth/federation/{provider}/callback': {
    ...LATE,
    400: [PROBLEM, 'El inicio de sesión con el proveedor no es válido o ya se usó.'],
    404: [UNKNOWN_PROVIDER],
    500: [INTERNAL],
  },
  'POST /api/auth/federation/token': {
    ...BODY_REFUSALS,
    400: [PROBLEM],
    401: [
      FEDERATION_CODE_INVALID,
      DEACTIVATED,
      LOCKED_OUT,
      CODE_REQUIRED,
      INVALID_CODE,
      'El desafío de la llave de acceso no es válido o ya se usó.',
      'No se pudo verificar la llave de acceso.',
      'Llave de acceso no reconocida.',
      'Llave de acceso rechazada: su contador de firmas retrocedió.',
    ],
    500: [INTERNAL],
    503: [MFA_OFF],
  },
  'POST /api/auth/federation/{provider}/link': {
    ...BODY_REFUSALS,
    400: [PROBLEM, REDIRECT_NOT_ALLOWED],
    401: PASSWORD_REFUSALS,
    // As on every bearer route: the token's account is gone.
    404: [UNKNOWN_PROVIDER, NOT_FOUND],
    500: [INTERNAL],
    503: [PROVIDER_UNAVAILABLE],
  },
  'GET /api/auth/identities': {
    ...LATE,
    401: [DEACTIVATED, UNAUTHORIZED],
    404: [NOT_FOUND],
    500: [INTERNAL],
  },
  'DELETE /api/auth/identities/{id}': {
    ...BODY_REFUSALS,
    400: [PROBLEM],
    401: [DEACTIVATED, UNAUTHORIZED],
    404: ['Identidad vinculada no encontrada.', NOT_FOUND],
    409: ['No puedes quitar la única forma de iniciar sesión de la cuenta.'],
    500: [INTERNAL],
  },
};

/** The OpenID provider's own routes: OAuth and OpenID Connect, not this interface. */
function isProtocolRoute(url: string): boolean {
  return (
    url.startsWith('/oauth/') ||
    url === '/.well-known/openid-configuration' ||
    url === '/.well-known/oauth-authorization-server'
  );
}

/** The person's consents to applications (issue 39, only with OAuthServer__Enabled). */
const OAUTH_GRANTS_RESPONSE_TEXTS: Readonly<
  Record<string, Readonly<Record<string, readonly string[]>>>
> = {
  'GET /api/auth/oauth/grants': {
    ...LATE,
    401: [DEACTIVATED, UNAUTHORIZED],
    404: [NOT_FOUND],
    500: [INTERNAL],
  },
  'DELETE /api/auth/oauth/grants/{clientId}': {
    ...BODY_REFUSALS,
    400: [PROBLEM],
    401: [DEACTIVATED, UNAUTHORIZED],
    404: ['No ha autorizado a esa aplicación.', NOT_FOUND],
    500: [INTERNAL],
  },
};

describe('openapi.json, the contract', () => {
  describe('generation', () => {
    it(
      'should equal what `npm run openapi` generates from the code now, without a database file',
      async () => {
        const cwd = mkdtempSync(join(tmpdir(), 'keygate-openapi-'));
        try {
          const output = join(cwd, 'openapi.json');

          await run(process.execPath, [GENERATOR, output], {
            cwd,
            env: {},
            timeout: PROCESS_TEST_TIMEOUT_MS - 5_000,
          });

          const generated = readFileSync(output, 'utf8');
          expect(JSON.parse(generated)).toEqual(contract);
          expect(generated).toBe(committedText);
          expect(readdirSync(cwd)).toEqual(['openapi.json']);
        } finally {
          rmSync(cwd, { recursive: true, force: true });
        }
      },
      PROCESS_TEST_TIMEOUT_MS,
    );

    it(
      'should be the document the development server serves at /openapi.json',
      async () => {
        const development = await startDevelopmentServer(OPT_IN_ENVIRONMENT);
        try {
          const response = await httpRequest(development.server.baseUrl, '/openapi.json');

          expect(response.status).toBe(200);
          expect(response.json()).toEqual(contract);
        } finally {
          await development.stop();
        }
      },
      PROCESS_TEST_TIMEOUT_MS,
    );
  });

  describe('routes', () => {
    const t = useSharedTestApp(() => ({ environment: OPT_IN_ENVIRONMENT }));

    /**
     * Every route the public port serves. Fastify answers HEAD for each GET route by itself
     * (exposeHeadRoutes); the document lists the GET. In production, and so in these tests, the
     * Swagger UI routes do not exist.
     */
    function servedRoutes(): RegisteredRoute[] {
      const gets = new Set(t.routes.filter((r) => r.method === 'GET').map((r) => r.url));
      // The admin API has its own document (test/admin-openapi.e2e-spec.ts); the OpenID
      // provider's protocol routes and hosted pages are described by its discovery document.
      return t.routes.filter(
        (r) =>
          !(r.method === 'HEAD' && gets.has(r.url)) &&
          !r.url.startsWith('/api/admin/') &&
          !isProtocolRoute(r.url),
      );
    }

    /** `POST /api/x/:id` → `POST /api/x/{id}`, as the document writes it. */
    function asDocumented(route: RegisteredRoute): string {
      return `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`;
    }

    /** Whether the global guard answers an anonymous request with the bare 401 (SPEC §7). */
    async function isGuarded(route: RegisteredRoute): Promise<boolean> {
      const path = route.url.replace(/:\w+/g, '00000000-0000-4000-8000-000000000000');
      const hasBody = ['POST', 'PUT', 'PATCH'].includes(route.method);
      const response = await t.request(path, {
        method: route.method,
        ...(hasBody ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}),
      });
      return response.status === 401 && isJson(response.text, UNAUTHORIZED_BODY);
    }

    it('should find the routes of the specification among the registered ones', () => {
      expect(servedRoutes().map(asDocumented)).toEqual(
        expect.arrayContaining(Object.keys(SPEC_RESPONSE_TEXTS)),
      );
    });

    it('should document every registered route with its method, and nothing else', () => {
      const registered = servedRoutes().map(asDocumented).sort();
      const documented = operations.map(({ route }) => route).sort();

      expect(documented).toEqual(registered);
    });

    it('should put bearer security on exactly the routes the global guard protects', async () => {
      const guarded: Record<string, boolean> = {};
      for (const route of servedRoutes()) {
        guarded[asDocumented(route)] = await isGuarded(route);
      }
      const secured = Object.fromEntries(
        operations.map(({ route, operation }) => [
          route,
          (operation.security ?? []).some((requirement) => 'bearer' in requirement),
        ]),
      );

      expect(secured).toEqual(guarded);
      expect(guarded['GET /api/auth/me']).toBe(true);
      expect(guarded['POST /api/auth/login']).toBe(false);
    });

    /**
     * Requests that make an operation fail in every way a client can cause without a database
     * fault: no token, a valid token, and for an operation with a body an empty, malformed,
     * oversized or non-JSON one. Each status answered must be documented on the operation.
     */
    it.each(operations)(
      'should declare every status $route answers',
      async ({ route, operation }) => {
        const user = await registerUser(t);
        const [method = '', template = ''] = route.split(' ');
        const path = template.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
        const json = { 'content-type': 'application/json' };
        const bearer = { authorization: `Bearer ${user.accessToken}` };
        const bodies: Array<{ headers: Record<string, string>; body: string }> = [
          { headers: { 'content-type': 'text/plain' }, body: 'x' },
          { headers: { ...bearer, 'content-type': 'text/plain' }, body: 'x' },
          { headers: { ...bearer, ...json }, body: '{}' },
          { headers: { ...bearer, ...json }, body: '{"refreshToken":' },
          {
            headers: { ...bearer, ...json },
            body: JSON.stringify({ refreshToken: 'x'.repeat(70_000) }),
          },
          {
            headers: { ...bearer, ...json },
            body: JSON.stringify({ refreshToken: user.refreshToken }),
          },
        ];
        const attempts = [
          { headers: {} },
          { headers: bearer },
          ...(operation.requestBody === undefined && !BODY_READING_METHODS.has(method)
            ? []
            : bodies),
        ];
        const answered = new Set<string>();
        for (const attempt of attempts) {
          answered.add(String((await t.request(path, { method, ...attempt })).status));
        }
        const declared = operations.find((candidate) => candidate.route === route)?.operation;

        expect([...answered].filter((status) => declared?.responses[status] === undefined)).toEqual(
          [],
        );
      },
    );
  });

  describe('for code generators', () => {
    it('should name every operation with a short verb, once', () => {
      const ids = operations.map(({ operation }) => operation.operationId ?? '');

      expect(Object.fromEntries(operations.map(({ route }, i) => [route, ids[i]]))).toEqual({
        'POST /api/auth/register': 'register',
        'POST /api/auth/login': 'login',
        'POST /api/auth/refresh': 'refresh',
        'POST /api/auth/revoke': 'revoke',
        'GET /api/auth/me': 'me',
        'GET /api/auth/sessions': 'listSessions',
        'POST /api/auth/sessions/revoke-all': 'revokeAllSessions',
        'GET /health/live': 'checkLiveness',
        'GET /health/ready': 'checkReadiness',
        'POST /api/auth/password/change': 'changePassword',
        'POST /api/auth/password/forgot': 'forgotPassword',
        'POST /api/auth/password/reset': 'resetPassword',
        'POST /api/auth/email/verify': 'verifyEmail',
        'POST /api/auth/email/verify/resend': 'resendVerification',
        'POST /api/auth/email/change': 'changeEmail',
        'DELETE /api/auth/me': 'deleteAccount',
        'POST /api/auth/mfa/totp/enroll': 'enrollTotp',
        'POST /api/auth/mfa/totp/confirm': 'confirmTotp',
        'POST /api/auth/mfa/totp/recovery-codes': 'replaceRecoveryCodes',
        'POST /api/auth/mfa/totp/disable': 'disableTotp',
        'POST /api/auth/email-code/send': 'sendEmailCode',
        'POST /api/auth/email-code/login': 'loginWithEmailCode',
        'POST /api/auth/passkeys/register/options': 'passkeyRegistrationOptions',
        'POST /api/auth/passkeys/register/verify': 'registerPasskey',
        'GET /api/auth/passkeys': 'listPasskeys',
        'PATCH /api/auth/passkeys/{id}': 'renamePasskey',
        'DELETE /api/auth/passkeys/{id}': 'removePasskey',
        'POST /api/auth/passkeys/login/options': 'passkeyLoginOptions',
        'POST /api/auth/passkeys/login/verify': 'loginWithPasskey',
        'GET /.well-known/jwks.json': 'getJwks',
        'GET /api/auth/federation/providers': 'listFederationProviders',
        'GET /api/auth/federation/{provider}/authorize': 'authorizeWithProvider',
        'GET /api/auth/federation/{provider}/callback': 'completeProviderSignIn',
        'POST /api/auth/federation/token': 'exchangeFederationCode',
        'POST /api/auth/federation/{provider}/link': 'linkIdentity',
        'GET /api/auth/identities': 'listIdentities',
        'DELETE /api/auth/identities/{id}': 'unlinkIdentity',
        'GET /api/auth/oauth/grants': 'listOAuthGrants',
        'DELETE /api/auth/oauth/grants/{clientId}': 'withdrawOAuthGrant',
      });
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('should mark exactly the federation and OpenID provider routes as existing only with their setting', () => {
      const marked = operations
        .filter(({ operation }) => 'x-keygate-requires' in operation)
        .map(({ route, operation }) => ({
          route,
          setting: (operation as unknown as Record<string, unknown>)['x-keygate-requires'],
          notice: operation.description?.split('\n')[0],
        }));
      const settingOf = (route: string) =>
        /\/api\/auth\/(federation|identities)\b/.test(route)
          ? 'Federation__Providers'
          : /\/api\/auth\/oauth\//.test(route)
            ? 'OAuthServer__Enabled'
            : undefined;

      expect(marked.map(({ route }) => route).sort()).toEqual(
        operations
          .map(({ route }) => route)
          .filter((route) => settingOf(route) !== undefined)
          .sort(),
      );
      expect(marked).toHaveLength(9);
      for (const { route, setting, notice } of marked) {
        expect({ setting, notice }).toEqual({
          setting: settingOf(route),
          notice: `Available only when ${settingOf(route)} is configured; without it this route does not exist (404, as any unknown path).`,
        });
      }
    });

    it('should say where the paths are, relative to the deployment that serves the document', () => {
      expect(contract.servers).toEqual([{ url: '/', description: expect.any(String) as unknown }]);
    });

    it('should format every id as a UUID and every instant as a date-time', () => {
      const fields = Object.entries(contract.components?.schemas ?? {}).flatMap(([name, schema]) =>
        Object.entries('properties' in schema ? (schema.properties ?? {}) : {}).map(
          ([property, definition]) => ({
            field: `${name}.${property}`,
            format: '$ref' in definition ? undefined : definition.format,
          }),
        ),
      );
      // WebAuthn's own ids are not ours: credential ids are base64url, the relying party a domain.
      const webAuthnIds = new Set([
        'AuthenticationResponseDto.id',
        'AuthenticationResponseDto.rawId',
        'RegistrationResponseDto.id',
        'RegistrationResponseDto.rawId',
        'PasskeyRequestOptionsResponseDto.rpId',
        // A provider's id is the name an operator gave it in Federation__Providers.
        'ProviderSummaryDto.id',
        // An application registered by an operator has a UUID; one known by its client ID
        // metadata document (issue 40) has that document's URL.
        'OAuthGrantResponseDto.clientId',
      ]);
      const ids = fields.filter(
        ({ field }) => /\.(id|\w+Id)$/.test(field) && !webAuthnIds.has(field),
      );
      const instants = fields.filter(({ field }) => /\.(\w+At|\w+Expiry|timestamp)$/.test(field));

      expect(ids.map(({ field }) => field).sort()).toEqual([
        'IdentityResponseDto.id',
        'PasskeyResponseDto.id',
        'SessionResponseDto.id',
        'UserResponseDto.id',
      ]);
      expect(instants.length).toBeGreaterThanOrEqual(5);
      expect(ids.filter(({ format }) => format !== 'uuid')).toEqual([]);
      expect(instants.filter(({ format }) => format !== 'date-time')).toEqual([]);
    });

    it.each(operations)(
      'should describe every success of $route with examples',
      ({ operation }) => {
        const successes = listResponses(operation).filter(({ status }) => /^[23]/.test(status));

        expect(successes).not.toEqual([]);
        // A 204 (removing a passkey) and a 302 (the federation flow's redirects) have no body to
        // exemplify.
        for (const { status, response } of successes.filter(
          (success) => success.status !== '204' && success.status !== '302',
        )) {
          const examples = Object.keys(response.content?.['application/json']?.examples ?? {});
          // One example per message the success can carry (verifyEmail has two).
          expect({
            status,
            described: response.description.length > 0,
            exemplified: examples.length > 0,
          }).toEqual({ status, described: true, exemplified: true });
        }
      },
    );

    it.each(
      operations.filter(
        ({ route, operation }) =>
          operation.requestBody !== undefined ||
          BODY_READING_METHODS.has(route.split(' ')[0] ?? ''),
      ),
    )('should declare on $route the refusals of a body: 400, 413 and 415', ({ operation }) => {
      expect(Object.keys(operation.responses)).toEqual(
        expect.arrayContaining(['400', '413', '415']),
      );
    });

    it.each(operations.filter(({ operation }) => operation.security !== undefined))(
      'should document the WWW-Authenticate challenge of the 401 on $route',
      ({ operation }) => {
        const unauthorized = listResponses(operation).find(({ status }) => status === '401');

        expect(Object.keys(unauthorized?.response.headers ?? {})).toEqual(['WWW-Authenticate']);
      },
    );
  });

  describe('bearer authentication', () => {
    it('should define the bearer scheme as an HTTP bearer JWT', () => {
      expect(contract.components?.securitySchemes?.bearer).toEqual({
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: expect.stringContaining('Authorization: Bearer <token>') as unknown,
      });
    });

    it.each(operations.filter(({ operation }) => operation.security !== undefined))(
      "should show the guard's bare 401 on $route",
      ({ operation }) => {
        const unauthorized = listExamples(operation)
          .filter((example) => example.status === '401')
          .map((example) => example.value);

        expect(unauthorized).toContainEqual(UNAUTHORIZED_BODY);
      },
    );
  });

  describe('messages', () => {
    const examples = operations.flatMap(({ route, operation }) =>
      listExamples(operation).map((example) => ({ route, ...example })),
    );

    it.each(RESPONSE_TEXTS)('should show "$text" as an example', ({ pattern }) => {
      const shownOn = examples.filter(({ value }) => pattern.test(exampleText(value) ?? ''));

      expect(shownOn.map(({ route, status }) => `${route} ${status}`)).not.toEqual([]);
    });

    it.each(
      Object.entries({
        ...SPEC_RESPONSE_TEXTS,
        ...FEDERATION_RESPONSE_TEXTS,
        ...OAUTH_GRANTS_RESPONSE_TEXTS,
      }),
    )('should show on %s exactly the texts of the specification, per status', (route, expected) => {
      const operation = operations.find((candidate) => candidate.route === route)?.operation;
      const shown: Record<string, string[]> = {};
      for (const example of operation === undefined ? [] : listExamples(operation)) {
        const text = exampleText(example.value);
        if (text !== undefined) {
          (shown[example.status] ??= []).push(text);
        }
      }
      const sorted = (texts: Record<string, readonly string[]>) =>
        Object.fromEntries(
          Object.entries(texts).map(([status, list]) => [status, [...list].sort()]),
        );

      expect(sorted(shown)).toEqual(sorted(expected));
    });
  });

  describe('error bodies', () => {
    it('should define the error body of SPEC §2.4 as a named schema', () => {
      expect(contract.components?.schemas?.[ERROR_SCHEMA]).toEqual({
        type: 'object',
        properties: {
          status: expect.objectContaining({ type: 'integer' }),
          message: expect.objectContaining({ type: 'string' }),
          timestamp: expect.objectContaining({ type: 'string', format: 'date-time' }),
        },
        required: ['status', 'message'],
      });
    });

    it('should define the problem details of SPEC §7 as a named schema', () => {
      expect(contract.components?.schemas?.[PROBLEM_SCHEMA]).toEqual({
        type: 'object',
        properties: {
          type: expect.objectContaining({ type: 'string' }),
          title: expect.objectContaining({ type: 'string' }),
          status: expect.objectContaining({ type: 'integer' }),
          errors: expect.objectContaining({
            type: 'object',
            additionalProperties: { type: 'array', items: { type: 'string' } },
          }),
        },
        required: ['type', 'title', 'status', 'errors'],
      });
    });

    it.each(operations)(
      'should answer every failure of $route with one of them',
      ({ route, operation }) => {
        const failures = listResponses(operation).filter(
          ({ status }) => Number(status) >= 400 && !isHealthProbeVerdict(route, status),
        );
        const violations = failures.flatMap(({ status, response }) => {
          const content = Object.entries(response.content ?? {});
          return content.length === 0
            ? [`${status}: no body`]
            : content
                .filter(
                  ([mediaType, media]) => schemaName(media.schema) !== FAILURE_SCHEMAS[mediaType],
                )
                .map(([mediaType, media]) => `${status} ${mediaType}: ${schemaName(media.schema)}`);
        });

        expect(failures.map(({ status }) => status)).toContain('500');
        expect(violations).toEqual([]);
      },
    );

    it.each(operations)(
      'should give examples on $route that fit their schemas',
      ({ operation }) => {
        const violations = listExamples(operation).flatMap(({ status, schema, value }) =>
          schema === undefined
            ? [`${status}: example without a schema`]
            : schemaViolations(contract, schema, value).map(
                (violation) => `${status}: ${violation}`,
              ),
        );

        expect(violations).toEqual([]);
      },
    );
  });
});

/** The messages objects exported by every `*.messages.ts` module under src but the CLI's. */
async function messagesOfModules(): Promise<
  Array<string | { readonly text: string; readonly pattern: RegExp }>
> {
  const files = readdirSync(SOURCES, { recursive: true, encoding: 'utf8' })
    .filter(
      (file) => file.endsWith('.messages.ts') && !CLI_ONLY.test(file) && !PROVIDER_TEXTS.test(file),
    )
    .sort();
  const texts: Array<string | { text: string; pattern: RegExp }> = [];
  for (const file of files) {
    const exported = (await import(join(SOURCES, file))) as Record<string, unknown>;
    for (const messages of Object.values(exported)) {
      if (typeof messages !== 'object' || messages === null) {
        continue;
      }
      for (const [key, message] of Object.entries(messages)) {
        if (key.endsWith('Reason')) {
          continue;
        }
        if (typeof message === 'string') {
          texts.push(message);
        } else if (typeof message === 'function') {
          texts.push(template(message as (value: number) => unknown));
        }
      }
    }
  }
  return texts;
}

/** A message template as a pattern: its numeric argument may be any whole number. */
function template(render: (value: number) => unknown): { text: string; pattern: RegExp } {
  const SENTINEL = 987_654_321;
  const text = String(render(SENTINEL));
  const pattern = new RegExp(`^${escapeRegExp(text).replace(String(SENTINEL), '\\d+')}$`);
  return { text: text.replace(String(SENTINEL), '{n}'), pattern };
}

function exactly(text: string): RegExp {
  return new RegExp(`^${escapeRegExp(text)}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isJson(text: string, expected: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(text), expected);
  } catch {
    return false;
  }
}
