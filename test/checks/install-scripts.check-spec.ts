import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRepositoryFile, REPOSITORY_ROOT } from './markdown.js';

// Every dependency that runs an install script is a decision recorded in package.json's
// `allowScripts` (`npm install-scripts approve|deny <name>`): approved, or denied. npm 11 warns
// about the others on every install and documents blocking them by default, which would leave
// better-sqlite3 uncompiled and the service unable to start on a fresh machine. See
// docs/development.md#install-scripts.

/** The lifecycle scripts npm runs when it installs a dependency. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const;

interface Manifest {
  readonly name?: string;
  readonly version?: string;
  readonly scripts?: Readonly<Record<string, string>>;
  readonly allowScripts?: Readonly<Record<string, boolean>>;
}

interface LockEntry {
  readonly version?: string;
  readonly hasInstallScript?: boolean;
  readonly link?: boolean;
}

/** A package that runs install scripts, as `name@version`. */
interface Scripted {
  readonly name: string;
  readonly version: string;
}

const project = JSON.parse(readRepositoryFile('package.json')) as Manifest;
const decisions = project.allowScripts ?? {};

/** The package a lockfile key names: what follows its last `node_modules/`. */
function nameOfLockKey(key: string): string {
  return key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/** What npm itself marks as running install scripts, from the lockfile `npm ci` installs. */
function scriptedInLockfile(): Scripted[] {
  const lock = JSON.parse(readRepositoryFile('package-lock.json')) as {
    readonly packages: Readonly<Record<string, LockEntry>>;
  };
  return Object.entries(lock.packages)
    .filter(([key, entry]) => key !== '' && entry.hasInstallScript === true && entry.link !== true)
    .map(([key, entry]) => ({ name: nameOfLockKey(key), version: entry.version ?? '' }));
}

/**
 * Every installed package (node_modules at any depth, scoped ones included) with an install
 * script of its own, or a `binding.gyp` without one, for which npm runs `node-gyp rebuild`.
 */
function scriptedInNodeModules(folder = join(REPOSITORY_ROOT, 'node_modules')): Scripted[] {
  if (!existsSync(folder)) {
    return [];
  }
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (!entry.isDirectory() || entry.name.startsWith('.')) {
      return [];
    }
    const path = join(folder, entry.name);
    if (entry.name.startsWith('@')) {
      return scriptedInNodeModules(path);
    }
    const nested = scriptedInNodeModules(join(path, 'node_modules'));
    const manifestPath = join(path, 'package.json');
    if (!existsSync(manifestPath)) {
      return nested;
    }
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
    const scripts = manifest.scripts ?? {};
    const runsScripts =
      INSTALL_SCRIPTS.some((name) => scripts[name] !== undefined) ||
      existsSync(join(path, 'binding.gyp'));
    return runsScripts
      ? [{ name: manifest.name ?? entry.name, version: manifest.version ?? '' }, ...nested]
      : nested;
  });
}

/**
 * The decision that covers `scripted`: an entry for its name, or for its name and this exact
 * version (what `npm install-scripts approve` writes when it can pin).
 */
function decisionFor(scripted: Scripted): boolean | undefined {
  return decisions[`${scripted.name}@${scripted.version}`] ?? decisions[scripted.name];
}

function undecided(packages: readonly Scripted[]): string[] {
  return [
    ...new Set(
      packages.filter((p) => decisionFor(p) === undefined).map((p) => `${p.name}@${p.version}`),
    ),
  ].sort();
}

describe('install scripts of dependencies', () => {
  it('should compile better-sqlite3, which the service cannot start without, and never run scarf', () => {
    expect(decisions).toMatchObject({ 'better-sqlite3': true, '@scarf/scarf': false });
  });

  it('should have a decision for every package the lockfile marks as running install scripts', () => {
    expect(scriptedInLockfile().length).toBeGreaterThan(0);
    expect(undecided(scriptedInLockfile())).toEqual([]);
  });

  it('should have a decision for every installed package with install scripts', () => {
    expect(scriptedInNodeModules().map((p) => p.name)).toContain('better-sqlite3');
    expect(undecided(scriptedInNodeModules())).toEqual([]);
  });

  it('should record decisions only as a name or a name and exact version, each for a package the lockfile has with install scripts', () => {
    const scripted = scriptedInLockfile();
    const known = new Set(scripted.flatMap((p) => [p.name, `${p.name}@${p.version}`]));

    expect(Object.keys(decisions).filter((key) => !known.has(key))).toEqual([]);
    expect(Object.values(decisions).every((value) => typeof value === 'boolean')).toBe(true);
  });
});
