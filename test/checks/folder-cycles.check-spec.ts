import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';
import { REPOSITORY_ROOT } from './markdown.js';

// The folders of src/ depend on each other without a cycle: a module can be understood, and
// moved, starting from the folders it imports. Entry points (files no other file imports: main,
// the CLIs, the TypeORM CLI's data source) may import anything, since nothing depends on them.

const SOURCE = join(REPOSITORY_ROOT, 'src');

/** Source files (specs excluded), relative to src. */
function sourceFiles(folder = SOURCE): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      return sourceFiles(path);
    }
    const isSource = entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts');
    return isSource ? [relative(SOURCE, path)] : [];
  });
}

/** The files of src that `file` imports (relative specifiers, `.js` written for `.ts`). */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(SOURCE, file), 'utf8'), true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) =>
      relative(SOURCE, join(SOURCE, dirname(file), specifier)).replace(/\.js$/, '.ts'),
    );
}

/** The top folder under src; files directly in src form the folder `.`. */
function folderOf(file: string): string {
  const [top, ...rest] = file.split(sep);
  return rest.length > 0 ? (top ?? '.') : '.';
}

/** folder → the folders it imports, each with one file that makes the import. */
export function folderDependencies(files: readonly string[]): Map<string, Map<string, string>> {
  const imports = new Map(files.map((file) => [file, importsOf(file)]));
  const imported = new Set([...imports.values()].flat());
  const graph = new Map<string, Map<string, string>>();
  for (const [file, targets] of imports) {
    if (!imported.has(file)) {
      continue;
    }
    for (const target of targets) {
      const [from, to] = [folderOf(file), folderOf(target)];
      if (from !== to) {
        const edges = graph.get(from) ?? new Map<string, string>();
        edges.set(to, edges.get(to) ?? file);
        graph.set(from, edges);
      }
    }
  }
  return graph;
}

/** Each cycle found by a depth-first walk, as `a → b (via file) → … → a`. */
export function cyclesOf(graph: ReadonlyMap<string, ReadonlyMap<string, string>>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const visit = (folder: string, path: readonly string[]): void => {
    const at = path.indexOf(folder);
    if (at >= 0) {
      const loop = [...path.slice(at), folder];
      cycles.push(
        loop
          .map((step, index) =>
            index === 0 ? step : `${step} (${graph.get(loop[index - 1] ?? '')?.get(step)})`,
          )
          .join(' → '),
      );
      return;
    }
    if (done.has(folder)) {
      return;
    }
    for (const next of graph.get(folder)?.keys() ?? []) {
      visit(next, [...path, folder]);
    }
    done.add(folder);
  };
  for (const folder of graph.keys()) {
    visit(folder, []);
  }
  return cycles;
}

describe('dependencies between the folders of src', () => {
  it('should read the imports of the source', () => {
    const graph = folderDependencies(sourceFiles());

    expect(graph.get('auth')?.has('tokens')).toBe(true);
    expect(graph.get('tokens')?.has('users')).toBe(true);
  });

  it('should form no cycle', () => {
    expect(cyclesOf(folderDependencies(sourceFiles()))).toEqual([]);
  });

  it('should report a cycle, naming a file of each step', () => {
    const graph = new Map([
      ['auth', new Map([['tokens', 'auth/auth.service.ts']])],
      ['tokens', new Map([['auth', 'tokens/tokens.service.ts']])],
    ]);

    expect(cyclesOf(graph)).toEqual([
      'auth → tokens (auth/auth.service.ts) → auth (tokens/tokens.service.ts)',
    ]);
  });
});
