import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// What a front-end team or a back office does with a contract: generate a typed client from it
// (openapi-typescript + openapi-fetch), type-check its own code against it with tsc, and run it.
// A fixture folder of test/ holds that code: flow.ts and its strict tsconfig.json.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TYPES_GENERATOR = join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** Generating, type-checking (tsc on a strict project) and running, on a busy machine. */
export const TYPED_CLIENT_TIMEOUT_MS = 120_000;

export interface TypedClient {
  /**
   * Generates `typesFile` from `contract` (a path from the repository's root), type-checks the
   * fixture's flow.ts against it (failing with tsc's errors when the code does not fit the
   * types), runs the compiled flow with `args` and answers what it printed.
   */
  generateCheckAndRun(contract: string, typesFile: string, args: string[]): Promise<string>;
}

/** A copy of the fixture folder `test/<fixture>` in a temporary directory, for a describe block. */
export function useTypedClient(fixture: string): TypedClient {
  let directory: string;

  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), `keygate-${fixture}-`));
    symlinkSync(join(ROOT, 'node_modules'), join(directory, 'node_modules'), 'dir');
    writeFileSync(join(directory, 'package.json'), '{ "type": "module", "private": true }\n');
    for (const file of ['flow.ts', 'tsconfig.json']) {
      copyFileSync(join(ROOT, 'test', fixture, file), join(directory, file));
    }
  });

  afterAll(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  return {
    async generateCheckAndRun(contract, typesFile, args) {
      await run(process.execPath, [TYPES_GENERATOR, join(ROOT, contract), '-o', typesFile], {
        cwd: directory,
      });
      await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: directory }).catch(
        (error: Error & { stdout?: string }) => {
          throw new Error(`tsc refused the client code:\n${error.stdout ?? error.message}`);
        },
      );
      const { stdout } = await run(process.execPath, [join('out', 'flow.js'), ...args], {
        cwd: directory,
      });
      return stdout;
    },
  };
}
