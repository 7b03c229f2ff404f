// `npm run openapi:validate [files…]`: checks the contracts (openapi.json and admin-openapi.json
// by default) with two independent OpenAPI validators, as code generators and API gateways
// would, and prints each refusal. Exit code 1 when a document is refused by either.
// A plain Node process: @apidevtools/swagger-parser requires an ES module, which Jest's module
// runtime cannot load (test/checks/openapi-validity.check-spec.ts runs this script).
import SwaggerParser from '@apidevtools/swagger-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const DEFAULT_FILES = ['../openapi.json', '../admin-openapi.json'].map((file) =>
  fileURLToPath(new URL(file, import.meta.url)),
);

/** One line per refusal, prefixed with the validator's name; none: the document is valid. */
async function refusalsOf(file) {
  const text = readFileSync(file, 'utf8');
  const document = JSON.parse(text);
  const refusals = [];
  try {
    // validate() dereferences the document in place: it gets its own copy.
    await SwaggerParser.validate(JSON.parse(text));
  } catch (error) {
    refusals.push(`swagger-parser: ${error instanceof Error ? error.message : String(error)}`);
  }
  const result = await new Validator().validate(document);
  if (!result.valid) {
    const errors = Array.isArray(result.errors) ? result.errors : [result.errors];
    for (const error of errors) {
      refusals.push(`openapi-schema-validator: ${JSON.stringify(error)}`);
    }
  }
  return refusals;
}

const files = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_FILES;
let failed = false;
for (const file of files) {
  const refusals = await refusalsOf(file);
  if (refusals.length === 0) {
    process.stdout.write(`${file}: valid\n`);
  } else {
    failed = true;
    process.stdout.write(`${file}: refused\n${refusals.map((line) => `  ${line}\n`).join('')}`);
  }
}
process.exitCode = failed ? 1 : 0;
