import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { adminOpenApiDocumentOf } from './admin/http/admin-openapi.js';
import { AppModule } from './app.module.js';
import { configureApp, createHttpAdapter, openApiDocumentOf } from './app.setup.js';
import { RandomSource } from './common/random/random-source.js';
import { serializeOpenApiDocument } from './common/swagger/openapi-document.js';
import { EXTENSIONS } from './extensions.js';

// `npm run openapi`: writes the contracts, openapi.json and admin-openapi.json, from the code,
// whatever the mode; the application is built (on a throwaway in-memory database) but never
// listens. An optional argument names another output file for openapi.json (the contract test
// writes to a temporary one), a second one for admin-openapi.json; with only the first, only
// openapi.json is written.

/** The repository root, seen from dist/openapi.js. */
const CONTRACT_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));
const ADMIN_CONTRACT_FILE = fileURLToPath(new URL('../admin-openapi.json', import.meta.url));

/**
 * The production defaults, read from nothing else (no `.env`, no environment), so the document
 * is the same on every machine. The secret only has to pass validation and is never used.
 * Sign-in through other providers is mounted (with a provider no one reaches) so that its routes
 * are documented, each marked `x-keygate-requires: Federation__Providers`: without the setting
 * they do not exist. The provider's id and name appear nowhere in the documents. The OpenID
 * provider is on for the same reason (its routes marked `OAuthServer__Enabled`); it signs with
 * ES256, under a throwaway encryption key.
 */
const CONTRACT_ENVIRONMENT: Readonly<Record<string, string>> = {
  NODE_ENV: 'production',
  Jwt__SecretKey: new RandomSource().bytes(48).toString('base64url'),
  ConnectionStrings__DefaultConnection: ':memory:',
  TokenCleanup__Enabled: 'false',
  Federation__Providers: JSON.stringify([
    {
      id: 'contract',
      name: 'Contract',
      type: 'github',
      clientId: 'contract',
      clientSecret: new RandomSource().bytes(24).toString('base64url'),
    },
  ]),
  Federation__PublicUrl: 'https://keygate.example.com',
  Federation__RedirectUrls: 'https://app.example.com/signed-in',
  OAuthServer__Enabled: 'true',
  OAuthServer__Issuer: 'https://keygate.example.com',
  Jwt__SigningAlgorithm: 'ES256',
  Keys__EncryptionKeys: new RandomSource().bytes(32).toString('base64'),
};

async function writeContract(output: string, adminOutput: string | null): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    await AppModule.forRoot({ environment: CONTRACT_ENVIRONMENT, extensions: EXTENSIONS }),
    createHttpAdapter(),
    { abortOnError: false, bodyParser: false, logger: ['error'] },
  );
  try {
    configureApp(app);
    const document = openApiDocumentOf(app);
    await writeFile(output, serializeOpenApiDocument(document));
    process.stdout.write(`Wrote ${output} (${Object.keys(document.paths).length} paths)\n`);
    if (adminOutput !== null) {
      const admin = adminOpenApiDocumentOf(app);
      await writeFile(adminOutput, serializeOpenApiDocument(admin));
      process.stdout.write(`Wrote ${adminOutput} (${Object.keys(admin.paths).length} paths)\n`);
    }
  } finally {
    await app.close();
  }
}

const [output, adminOutput] = process.argv.slice(2);
writeContract(
  output ?? CONTRACT_FILE,
  output === undefined ? ADMIN_CONTRACT_FILE : (adminOutput ?? null),
).catch((error: unknown) => {
  const reason = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`openapi: ${reason}\n`);
  process.exit(1);
});
