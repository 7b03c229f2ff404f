import { readFileSync } from 'node:fs';

/**
 * The code a documentation page shows for a file: the first fenced block in `language` after the
 * page mentions the file as inline code (`` `src/greeting/greeting.module.ts` ``). Undefined when
 * the page does not mention it. Tests compare it with the file they run, so a page cannot drift.
 */
export function codeShownFor(page: string, file: string, language = 'ts'): string | undefined {
  const text = readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8');
  const start = text.indexOf(`\`${file}\``);
  const fence = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``);
  return start < 0 ? undefined : fence.exec(text.slice(start))?.[1];
}

/**
 * A file of a documented example as it would sit in src: the example's copy under `test/<folder>`
 * is one folder deeper, so `../../src/common/…` there is `../common/…` in src.
 */
export function asInSource(folder: string, file: string): string {
  const text = readFileSync(new URL(`../${folder}/${file}`, import.meta.url), 'utf8');
  return text.replace(/(['"])((?:\.\.\/)*)\.\.\/src\//g, '$1$2');
}
