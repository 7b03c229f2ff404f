import GithubSlugger from 'github-slugger';
import { marked, type Token, type Tokens } from 'marked';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder, with a trailing separator. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Folders that hold no documentation of this repository. */
const NOT_DOCUMENTATION = new Set(['node_modules', 'dist', 'coverage', '.git']);

/** Every Markdown file of the repository, as paths relative to its root. */
export function markdownFiles(folder = REPOSITORY_ROOT): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      return NOT_DOCUMENTATION.has(entry.name) ? [] : markdownFiles(path);
    }
    return entry.name.endsWith('.md') ? [relative(REPOSITORY_ROOT, path)] : [];
  });
}

export function readRepositoryFile(path: string): string {
  return readFileSync(join(REPOSITORY_ROOT, path), 'utf8');
}

export function tokensOf(path: string): Token[] {
  return marked.lexer(readRepositoryFile(path));
}

/** Every token of the document, nested ones (table cells, list items, links) included. */
export function allTokens(tokens: Token[]): Token[] {
  const found: Token[] = [];
  // The callback is synchronous, so the array walkTokens returns holds no promise.
  void marked.walkTokens(tokens, (token) => {
    found.push(token);
  });
  return found;
}

/** The text a reader sees: markup removed, code spans kept as their code. */
export function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((token) =>
      'tokens' in token && Array.isArray(token.tokens)
        ? plainText(token.tokens)
        : 'text' in token && typeof token.text === 'string'
          ? token.text
          : '',
    )
    .join('');
}

/** The `#anchors` that the usual code hosts give the document's headings. */
export function headingAnchors(tokens: Token[]): Set<string> {
  const slugger = new GithubSlugger();
  return new Set(
    allTokens(tokens)
      .filter((token): token is Tokens.Heading => token.type === 'heading')
      .map((heading) => slugger.slug(plainText(heading.tokens))),
  );
}

/** The rows of the tables that follow the heading `title`, up to the next heading, as cell texts. */
export function tableRowsUnder(tokens: Token[], title: string): string[][] {
  const start = tokens.findIndex(
    (token) => token.type === 'heading' && plainText((token as Tokens.Heading).tokens) === title,
  );
  if (start < 0) {
    return [];
  }
  const end = tokens.findIndex((token, index) => index > start && token.type === 'heading');
  return tokens
    .slice(start + 1, end < 0 ? undefined : end)
    .filter((token): token is Tokens.Table => token.type === 'table')
    .flatMap((table) => table.rows.map((row) => row.map((cell) => plainText(cell.tokens))));
}
