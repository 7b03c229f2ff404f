import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { AppModule } from './app.module.js';
import { configureApp, createHttpAdapter, openApiDocumentOf } from './app.setup.js';
import { RandomSource } from './common/random/random-source.js';
import { serializeOpenApiDocument } from './common/swagger/openapi-document.js';
import { EXTENSIONS } from './extensions.js';

// `npm run openapi`: writes the contract, openapi.json, from the code, whatever the mode; the
// application is built (on a throwaway in-memory database) but never listens. An optional
// argument names another output file (the contract test writes to a temporary one).

/** The repository root, seen from dist/openapi.js. */
const CONTRACT_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));

/**
 * The production defaults, read from nothing else (no `.env`, no environment), so the document
 * is the same on every machine. The secret only has to pass validation and is never used.
 */
const CONTRACT_ENVIRONMENT: Readonly<Record<string, string>> = {
  NODE_ENV: 'production',
  Jwt__SecretKey: new RandomSource().bytes(48).toString('base64url'),
  ConnectionStrings__DefaultConnection: ':memory:',
  TokenCleanup__Enabled: 'false',
};

async function writeContract(output: string): Promise<void> {
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
  } finally {
    await app.close();
  }
}

writeContract(process.argv[2] ?? CONTRACT_FILE).catch((error: unknown) => {
  const reason = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`openapi: ${reason}\n`);
  process.exit(1);
});
