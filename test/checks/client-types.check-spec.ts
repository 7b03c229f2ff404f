import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// @keygate/client's types are generated from openapi.json: the committed
// packages/client/src/openapi.ts is what openapi-typescript makes of today's contract
// (`npm run openapi` regenerates both).

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GENERATOR = join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');

describe("@keygate/client's types", () => {
  it('should be generated from the current openapi.json', () => {
    const directory = mkdtempSync(join(tmpdir(), 'keygate-client-types-'));
    try {
      const fresh = join(directory, 'openapi.ts');
      execFileSync(process.execPath, [GENERATOR, join(ROOT, 'openapi.json'), '-o', fresh], {
        stdio: 'ignore',
      });

      expect(readFileSync(join(ROOT, 'packages', 'client', 'src', 'openapi.ts'), 'utf8')).toBe(
        readFileSync(fresh, 'utf8'),
      );
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
