import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  LoopbackIssuer,
  signingKey,
  type SigningKey,
} from '../packages/resource/test/loopback-issuer.js';

// What would be published is what is tested: @keygate/resource is built, packed with `npm pack`,
// installed from the tarball (with the repository's own jose, packed the same way) into an empty
// project, type-checked there with the repository's tsc, and run in Node against an
// authorization server's metadata and key set served on loopback by this test.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PACKAGE = join(ROOT, 'packages', 'resource');
const JOSE = join(ROOT, 'node_modules', 'jose');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** Building, packing, installing, a type-check and a run, on a busy machine. */
const TIMEOUT_MS = 180_000;
const RESOURCE = 'https://mcp.example.com/mcp';

/** The consumer's code: every name it uses must exist with the types it expects. */
const CONSUMER = `import {
  AccessTokenError,
  IssuerUnavailableError,
  challenge,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  verifyAccessToken,
  type AccessTokenClaims,
  type ProtectedResourceMetadata,
  type VerifyAccessTokenOptions,
} from '@keygate/resource';

const [issuer, good, narrow] = process.argv.slice(2) as [string, string, string];
const resource = '${RESOURCE}';
const options: VerifyAccessTokenOptions = { issuer, resource, requiredScopes: ['files:read'] };
// @ts-expect-error: HMAC is not an algorithm the helper can be told to accept.
void (() => verifyAccessToken(good, { ...options, algorithms: ['HS256'] }));

const claims: AccessTokenClaims = await verifyAccessToken(good, options);
const refused = await verifyAccessToken(narrow, { ...options, requiredScopes: ['files:write'] }).catch(
  (error: unknown) => error,
);
const metadata: ProtectedResourceMetadata = protectedResourceMetadata({
  issuer,
  resource,
  scopesSupported: ['files:read', 'files:write'],
});
const resourceMetadataUrl = protectedResourceMetadataUrl(resource);
console.log(JSON.stringify({
  sub: claims.sub,
  scope: claims.scope,
  refused:
    refused instanceof AccessTokenError
      ? { code: refused.code, status: refused.status, requiredScopes: refused.requiredScopes }
      : String(refused),
  unavailable: new IssuerUnavailableError('x') instanceof Error,
  metadata,
  unauthorized: challenge({ resourceMetadataUrl }),
  forbidden: challenge({ resourceMetadataUrl, error: 'insufficient_scope', scope: ['files:write'] }),
}));
`;

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    lib: ['es2022'],
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    outDir: 'out',
  },
  files: ['consumer.ts'],
});

interface Packed {
  filename: string;
  files: { path: string }[];
}

describe('The @keygate/resource tarball', () => {
  let directory: string;
  let issuer: LoopbackIssuer;
  let key: SigningKey;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-resource-package-'));
    issuer = await LoopbackIssuer.start();
    key = await signingKey('package-key');
    issuer.published = [key];
  });

  afterAll(async () => {
    await issuer.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it(
    'should install into an empty project with jose as its one dependency, type-check and run',
    async () => {
      await run(process.execPath, [TSC, '-p', join(PACKAGE, 'tsconfig.build.json')]);
      const pack = async (cwd: string): Promise<Packed> => {
        const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', directory], {
          cwd,
        });
        return (JSON.parse(stdout) as Packed[])[0];
      };
      const { filename, files } = await pack(PACKAGE);
      const jose = await pack(JOSE);
      const project = join(directory, 'project');
      await run('mkdir', [project]);
      writeFileSync(join(project, 'package.json'), '{ "type": "module", "private": true }\n');
      await run(
        'npm',
        [
          'install',
          '--offline',
          '--no-audit',
          '--no-fund',
          join(directory, jose.filename),
          join(directory, filename),
        ],
        { cwd: project },
      );
      writeFileSync(join(project, 'consumer.ts'), CONSUMER);
      writeFileSync(join(project, 'tsconfig.json'), TSCONFIG);
      await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project }).catch(
        (error: Error & { stdout?: string }) => {
          throw new Error(`tsc refused the consumer:\n${error.stdout ?? error.message}`);
        },
      );

      const good = await issuer.mint(key, { sub: 'user-1', aud: RESOURCE, scope: 'files:read' });
      const { stdout } = await run(
        process.execPath,
        [join('out', 'consumer.js'), issuer.issuer, good, good],
        { cwd: project },
      );
      const installed = JSON.parse(
        readFileSync(join(project, 'node_modules', '@keygate', 'resource', 'package.json'), 'utf8'),
      ) as Record<string, unknown>;

      expect(files.map(({ path }) => path).sort()).toEqual([
        'README.md',
        'dist/access-token.d.ts',
        'dist/access-token.js',
        'dist/challenge.d.ts',
        'dist/challenge.js',
        'dist/errors.d.ts',
        'dist/errors.js',
        'dist/index.d.ts',
        'dist/index.js',
        'dist/issuer-keys.d.ts',
        'dist/issuer-keys.js',
        'dist/metadata.d.ts',
        'dist/metadata.js',
        'dist/resource-uri.d.ts',
        'dist/resource-uri.js',
        'package.json',
      ]);
      expect(installed.name).toBe('@keygate/resource');
      expect(installed.dependencies).toEqual({ jose: '^6.2.18' });
      const metadataUrl = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';
      expect(JSON.parse(stdout)).toEqual({
        sub: 'user-1',
        scope: 'files:read',
        refused: { code: 'insufficient_scope', status: 403, requiredScopes: ['files:write'] },
        unavailable: true,
        metadata: {
          resource: RESOURCE,
          authorization_servers: [issuer.issuer],
          scopes_supported: ['files:read', 'files:write'],
          bearer_methods_supported: ['header'],
        },
        unauthorized: `Bearer resource_metadata="${metadataUrl}"`,
        forbidden: `Bearer error="insufficient_scope", scope="files:write", resource_metadata="${metadataUrl}"`,
      });
    },
    TIMEOUT_MS,
  );
});
