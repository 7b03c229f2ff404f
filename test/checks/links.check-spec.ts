import type { Tokens } from 'marked';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import {
  allTokens,
  headingAnchors,
  markdownFiles,
  readRepositoryFile,
  REPOSITORY_ROOT,
  tokensOf,
} from './markdown.js';

// Every relative link of every Markdown file of the repository leads somewhere inside it: the
// file or folder exists, and a `#anchor` names a heading of the Markdown file it points into (or
// a line, `#L12`, of another file). A clone has nothing outside the repository, so a link that
// leaves it is broken even when the file exists on this machine.

/** A scheme (`https:`, `mailto:`) or a protocol-relative `//host`: not a file of the repository. */
const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;
const LINE_ANCHOR = /^L(\d+)(?:-L(\d+))?$/;

/** Why the link does not resolve, or null when it does. */
function brokenBecause(from: string, href: string): string | null {
  const [rawPath = '', anchor] = href.split('#', 2);
  const path = decodeURIComponent(rawPath);
  const target =
    path === ''
      ? from
      : relative(
          REPOSITORY_ROOT,
          path.startsWith('/') ? join(REPOSITORY_ROOT, path) : join(dirname(from), path),
        );
  if (target === '..' || target.startsWith(`..${sep}`)) {
    return 'it leaves the repository';
  }
  const absolute = join(REPOSITORY_ROOT, target);
  if (!existsSync(absolute)) {
    return `${target} does not exist`;
  }
  if (anchor === undefined || anchor === '') {
    return null;
  }
  if (statSync(absolute).isDirectory()) {
    return `${target} is a folder, which has no anchors`;
  }
  if (target.endsWith('.md')) {
    return headingAnchors(tokensOf(target)).has(anchor)
      ? null
      : `${target} has no heading #${anchor}`;
  }
  const line = LINE_ANCHOR.exec(anchor);
  const lines = readRepositoryFile(target).split('\n').length;
  return line !== null && Number(line[2] ?? line[1]) <= lines
    ? null
    : `${target} has no line #${anchor}`;
}

function brokenLinks(path: string): string[] {
  return allTokens(tokensOf(path))
    .filter((token): token is Tokens.Link | Tokens.Image => ['link', 'image'].includes(token.type))
    .filter((link) => !EXTERNAL.test(link.href))
    .flatMap((link) => {
      const reason = brokenBecause(path, link.href);
      return reason === null ? [] : [`${link.href}: ${reason}`];
    });
}

describe('relative links in Markdown files', () => {
  it('should find the documentation', () => {
    expect(markdownFiles()).toEqual(
      expect.arrayContaining(['README.md', join('docs', 'api.md'), join('bench', 'README.md')]),
    );
  });

  it.each(markdownFiles())('should all resolve in %s', (path) => {
    expect(brokenLinks(path)).toEqual([]);
  });

  it.each([
    ['a missing file', 'docs/nowhere.md', 'docs/nowhere.md does not exist'],
    ['a missing heading', 'docs/api.md#nowhere', 'docs/api.md has no heading #nowhere'],
    ['a file outside the repository', '../shared/SPEC.md', 'it leaves the repository'],
    ['a line past the end', 'package.json#L100000', 'package.json has no line #L100000'],
  ])('should tell %s apart from a working link', (_case, href, reason) => {
    expect(brokenBecause('README.md', href)).toBe(reason);
    expect(brokenBecause('README.md', 'docs/api.md#the-interface')).toBeNull();
  });
});
