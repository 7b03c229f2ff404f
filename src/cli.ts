import 'reflect-metadata';
import { runCli } from './admin/cli/admin-cli.js';
import { EXTENSIONS } from './extensions.js';

// The admin CLI: `npm run cli -- <command>`. Commands and exit codes: src/admin/cli/cli-arguments.ts.
runCli(process.argv.slice(2), { out: process.stdout, err: process.stderr }, EXTENSIONS).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `keygate-cli: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
