import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The committed contracts are valid OpenAPI documents for two independent validators
// (@apidevtools/swagger-parser and @seriousme/openapi-schema-validator): code generators and API
// gateways that validate a document refuse an invalid one, as they once refused openapi.json
// for an empty `required` list. openapi.e2e-spec.ts and admin-openapi.e2e-spec.ts hold the
// files to what the code generates. The validators run in their own process
// (scripts/validate-openapi.mjs, `npm run openapi:validate`): one of them cannot be loaded by
// Jest's module runtime.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VALIDATOR = fileURLToPath(new URL('../../scripts/validate-openapi.mjs', import.meta.url));

describe.each(['openapi.json', 'admin-openapi.json'])('%s', (file) => {
  it('should be accepted by both OpenAPI validators', () => {
    const run = spawnSync(process.execPath, [VALIDATOR, `${ROOT}${file}`], { encoding: 'utf8' });

    expect({ status: run.status, output: run.stdout, errors: run.stderr }).toEqual({
      status: 0,
      output: `${ROOT}${file}: valid\n`,
      errors: '',
    });
  });
});
