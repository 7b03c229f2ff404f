import { getMetadataStorage } from 'class-validator';
import { EnvironmentVariables } from '../../src/config/environment-variables.js';
import { markdownFiles, readRepositoryFile, tableRowsUnder, tokensOf } from './markdown.js';

// The configuration keys the documentation names are the keys the code accepts: each key of
// EnvironmentVariables is described in docs/configuration.md and listed in .env.example, and no
// page names a key that the code would ignore.

/** Every property of the schema carries a validation decorator, so this is every accepted key. */
const ACCEPTED = new Set(
  getMetadataStorage()
    .getTargetValidationMetadatas(EnvironmentVariables, '', true, false)
    .map((metadata) => metadata.propertyName),
);

/** `KEY=value` lines of .env.example, commented-out examples (`# KEY=value`) included. */
function envExampleKeys(): Set<string> {
  const keys = readRepositoryFile('.env.example').matchAll(/^#?[ \t]*([A-Za-z][A-Za-z0-9_]*)=/gm);
  return new Set([...keys].map((match) => match[1] ?? ''));
}

/** The first cell of each row of the table under "Keys". */
function configurationPageKeys(): Set<string> {
  return new Set(
    tableRowsUnder(tokensOf('docs/configuration.md'), 'Keys').map((row) => row[0] ?? ''),
  );
}

/** Names shaped like keys (`Section__Name`), wherever a Markdown file mentions them. */
function keysMentionedIn(path: string): string[] {
  return [...readRepositoryFile(path).matchAll(/\b[A-Z][A-Za-z]*__[A-Za-z]+\b/g)].map(
    (match) => match[0],
  );
}

describe('configuration keys in the documentation', () => {
  it('should read the accepted keys from the schema', () => {
    expect(ACCEPTED).toContain('Jwt__SecretKey');
    expect(ACCEPTED).toContain('NODE_ENV');
    expect(ACCEPTED.size).toBeGreaterThan(20);
  });

  it('should describe exactly the accepted keys in docs/configuration.md', () => {
    expect([...configurationPageKeys()].sort()).toEqual([...ACCEPTED].sort());
  });

  it('should list exactly the accepted keys in .env.example', () => {
    expect([...envExampleKeys()].sort()).toEqual([...ACCEPTED].sort());
  });

  it.each(markdownFiles())('should name only accepted keys in %s', (path) => {
    const unknown = keysMentionedIn(path).filter((key) => !ACCEPTED.has(key));

    expect(unknown).toEqual([]);
  });
});
