// `nest build`, skipped when dist/ was built from exactly what is there now. The README's test
// command builds in `npm test`, `npm run test:pg` and `npm run test:browser` in turn; only the
// first has anything to compile. "Exactly what is there" is a digest of every input's path, size
// and modification time (src/, the TypeScript and Nest configuration, the lockfile), written
// beside the output after a successful build, so an edit, a checkout or a deleted file rebuilds.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INPUTS = [
  'src',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  'package-lock.json',
];
const STAMP = join(ROOT, 'dist', '.inputs');

function listInputs(path, lines) {
  const stat = statSync(path);
  lines.push(`${path.slice(ROOT.length)} ${stat.size} ${stat.mtimeMs}`);
  if (stat.isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      listInputs(join(path, name), lines);
    }
  }
}

const lines = [];
for (const input of INPUTS) {
  listInputs(join(ROOT, input), lines);
}
const digest = createHash('sha256').update(lines.join('\n')).digest('hex');

if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === digest) {
  process.stdout.write('dist/ is up to date with src/: not rebuilt\n');
  process.exit(0);
}
const build = spawnSync('npx', ['nest', 'build'], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) {
  process.exit(build.status ?? 1);
}
writeFileSync(STAMP, digest);
