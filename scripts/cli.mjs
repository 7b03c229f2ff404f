// `npm run cli -- <command>`: the admin CLI, run from the build as `npm start` runs the server.
// A fresh checkout has no build: the first run builds it (this needs the dev dependencies).
// After that, rebuild with `npm run build` when the sources change, as for the server.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const nest = fileURLToPath(new URL('../node_modules/@nestjs/cli/bin/nest.js', import.meta.url));

if (!existsSync(entry)) {
  if (!existsSync(nest)) {
    process.stderr.write(
      'keygate-cli: dist/cli.js is missing and cannot be built here (@nestjs/cli is not ' +
        'installed): run `npm run build` where the dev dependencies are installed.\n',
    );
    process.exit(1);
  }
  process.stderr.write('keygate-cli: dist/cli.js is missing: building it first (nest build)\n');
  // The build's own output goes to standard error: standard output is the command's answer.
  const build = spawnSync(process.execPath, [nest, 'build'], {
    cwd: root,
    stdio: ['ignore', 2, 2],
  });
  if (build.status !== 0 || !existsSync(entry)) {
    process.stderr.write('keygate-cli: the build failed; see above.\n');
    process.exit(1);
  }
}

await import(pathToFileURL(entry).href);
