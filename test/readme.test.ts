/**
 * The README and the docs cannot drift from the code: every ```ts block in them is a file under
 * examples/ that `npm run typecheck` compiles (a ```js block with a file line is checked the same
 * way: a JavaScript file that a test runs), and every relative link points at a file that exists.
 *
 * A ```ts block must be preceded, on the line right before it, by `<!-- file: examples/PATH.ts -->`,
 * and its text must equal that file's. One rewrite is allowed, because a file in this checkout
 * cannot import the package by its name (`toolrun` resolves to `dist/`, which is not built): a
 * relative import of a package entry (`'../../src/index.ts'`, `'../../src/adapters/ai-sdk/index.ts'`)
 * is shown as the package subpath that `package.json` `exports` maps to it (`'toolrun'`,
 * `'toolrun/ai-sdk'`). Any other relative import into `src/` would be shown as is, which a reader
 * cannot use, so it fails the test.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A fenced code block of a Markdown text: its language, text, 1-based line, and the line before its fence. */
interface CodeBlock {
  lang: string;
  text: string;
  line: number;
  before: string;
}

/** The fenced code blocks of `markdown` (``` fences only, as the README uses). */
function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^```(\S*)\s*$/.exec(lines[index] ?? '');
    if (!open) continue;
    const end = lines.findIndex((line, at) => at > index && /^```\s*$/.test(line));
    if (end === -1) throw new Error(`README.md:${index + 1}: a code fence that is never closed`);
    blocks.push({ lang: open[1] ?? '', text: lines.slice(index + 1, end).join('\n'), line: index + 1, before: index > 0 ? (lines[index - 1] ?? '') : '' });
    index = end;
  }
  return blocks;
}

/** The package's entries: source file (relative to the root, `src/….ts`) → import specifier (`toolrun`, `toolrun/ai-sdk`, …). */
function packageEntries(packageJson: { name: string; exports: Record<string, unknown> }): Map<string, string> {
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(packageJson.exports)) {
    const file = typeof target === 'string' ? target : (target as { default?: string }).default;
    if (file === undefined || !file.startsWith('./dist/') || !file.endsWith('.js')) continue;
    const source = `src/${file.slice('./dist/'.length, -'.js'.length)}.ts`;
    entries.set(source, subpath === '.' ? packageJson.name : `${packageJson.name}/${subpath.slice(2)}`);
  }
  return entries;
}

/**
 * A file's text as the README shows it: each relative import of a package entry replaced by the
 * entry's package specifier. `file` is relative to the root.
 */
function asShownInReadme(text: string, file: string, entries: ReadonlyMap<string, string>): string {
  return text.replace(/(from\s+|import\s+)(['"])(\.{1,2}\/[^'"]+)\2/g, (whole, keyword: string, quote: string, specifier: string) => {
    const target = posix.normalize(posix.join(posix.dirname(file), specifier));
    const entry = entries.get(target);
    return entry === undefined ? whole : `${keyword}${quote}${entry}${quote}`;
  });
}

const FILE_MARKER = /^<!-- file: (examples\/[^\s]+\.(?:ts|mjs)) -->$/;

/** Whether a block is checked against its file: every ts block, and a js block that names one. */
function isChecked(block: CodeBlock): boolean {
  return block.lang === 'ts' || block.lang === 'typescript' || (block.lang === 'js' && FILE_MARKER.test(block.before.trim()));
}

/** What is wrong with the ts blocks of `markdown` (empty when nothing is), each naming its block; `source` names the Markdown file. */
function checkTsBlocks(
  markdown: string,
  readFile: (path: string) => string | undefined,
  entries: ReadonlyMap<string, string>,
  options: { source?: string; fragmentsAllowed?: boolean } = {},
): string[] {
  const problems: string[] = [];
  const source = options.source ?? 'README.md';
  // in a doc, a ts block without a file line is a fragment shown as is; one with a file line is checked
  const checked = options.fragmentsAllowed ? (block: CodeBlock) => isChecked(block) && FILE_MARKER.test(block.before.trim()) : isChecked;
  for (const block of codeBlocks(markdown).filter(checked)) {
    const name = `the ${block.lang} block at ${source}:${block.line}`;
    const marker = FILE_MARKER.exec(block.before.trim());
    if (!marker?.[1]) {
      problems.push(`${name} has no "<!-- file: examples/….ts -->" line right before it`);
      continue;
    }
    const file = marker[1];
    const text = readFile(file);
    if (text === undefined) {
      problems.push(`${name} names ${file}, which does not exist`);
      continue;
    }
    const shown = asShownInReadme(text.replace(/\n$/, ''), file, entries);
    if (shown !== block.text) {
      const shownLines = shown.split('\n');
      const blockLines = block.text.split('\n');
      const at = shownLines.findIndex((line, index) => line !== blockLines[index]);
      const line = at === -1 ? Math.min(shownLines.length, blockLines.length) : at;
      problems.push(
        `${name} differs from ${file} at its line ${line + 1}:\n  README: ${JSON.stringify(blockLines[line] ?? '(end of block)')}\n  file:   ${JSON.stringify(shownLines[line] ?? '(end of file)')}`,
      );
    }
    const unreadable = /(?:from\s+|import\s+)['"](\.{1,2}\/[^'"]*\bsrc\/[^'"]*)['"]/.exec(shown);
    if (unreadable) problems.push(`${name} (${file}) imports ${unreadable[1]}, which is no package entry: import it from an entry of package.json exports`);
  }
  return problems;
}

/** The relative link targets of `markdown` (`](path)` outside code blocks; `#anchors` and URLs left out), with their line. */
function relativeLinks(markdown: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  let fenced = false;
  for (const [index, line] of markdown.split('\n').entries()) {
    if (/^```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
      links.push({ target: target.replace(/#.*$/, ''), line: index + 1 });
    }
  }
  return links;
}

const readme = readFileSync(join(root, 'README.md'), 'utf8');
/** The user docs: docs/**\/*.md, relative to the root. */
const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.md'))
  .map((path) => posix.join('docs', path.split('\\').join('/')));
const entries = packageEntries(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> });
const readRepoFile = (path: string): string | undefined => (existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : undefined);

describe('README.md', () => {
  it('has ts blocks, each the text of a type-checked file under examples/', () => {
    expect(codeBlocks(readme).filter((block) => block.lang === 'ts').length).toBeGreaterThanOrEqual(2);
    expect(checkTsBlocks(readme, readRepoFile, entries)).toEqual([]);
  });

  it('is a front door: at most 300 lines, with a table of contents whose links reach its headings', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(300);
    const anchors = new Set(
      readme
        .split('\n')
        .filter((line) => /^#{2,3} /.test(line))
        .map((line) =>
          line
            .replace(/^#+ /, '')
            .toLowerCase()
            .replace(/[^a-z0-9 -]/g, '')
            .replace(/ /g, '-'),
        ),
    );
    const contents = /^## Contents\n([\s\S]*?)\n## /m.exec(readme)?.[1] ?? '';
    const targets = [...contents.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]);
    expect(targets.length).toBeGreaterThan(5);
    expect(targets.filter((target) => !anchors.has(target ?? ''))).toEqual([]);
  });

  it('links only to files that exist', () => {
    const missing = relativeLinks(readme)
      .filter(({ target }) => !existsSync(join(root, decodeURI(target))))
      .map(({ target, line }) => `README.md:${line}: ${target}`);
    expect(missing).toEqual([]);
  });

  it('maps the package entries from package.json exports', () => {
    expect(entries.get('src/index.ts')).toBe('toolrun');
    expect(entries.get('src/adapters/ai-sdk/index.ts')).toBe('toolrun/ai-sdk');
    expect(entries.get('src/stores/sqlite/index.ts')).toBe('toolrun/sqlite');
  });
});

describe('the docs', () => {
  it('have more ts blocks, each of those with a file line the text of a type-checked file under examples/', () => {
    const texts = docs.map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }));
    const marked = texts.flatMap(({ text }) => codeBlocks(text).filter((block) => block.lang === 'ts' && FILE_MARKER.test(block.before.trim())));
    expect(marked.length).toBeGreaterThan(5);
    expect(texts.flatMap(({ path, text }) => checkTsBlocks(text, readRepoFile, entries, { source: path, fragmentsAllowed: true }))).toEqual([]);
  });
});

describe('the README checker', () => {
  const files: Record<string, string> = {
    'examples/readme/a.ts': "import { defineTool } from '../../src/index.ts';\nimport { x } from './x.ts';\nconsole.log(defineTool, x);\n",
    'examples/readme/bad.ts': "import { defineTool } from '../../src/core/define-tool.ts';\n",
  };
  const read = (path: string) => files[path];
  const block = (file: string, text: string) => `intro\n<!-- file: ${file} -->\n\`\`\`ts\n${text}\n\`\`\`\n`;

  it('accepts a block equal to its file, with the package name for the entry', () => {
    const text = "import { defineTool } from 'toolrun';\nimport { x } from './x.ts';\nconsole.log(defineTool, x);";
    expect(checkTsBlocks(block('examples/readme/a.ts', text), read, entries)).toEqual([]);
  });

  it('names a block that differs from its file, and where', () => {
    const text = "import { defineTool } from 'toolrun';\nimport { x } from './x.ts';\nconsole.log(defineTool);";
    const problems = checkTsBlocks(block('examples/readme/a.ts', text), read, entries);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/README\.md:3 differs from examples\/readme\/a\.ts at its line 3/);
  });

  it('names a block without a file line, one naming a missing file, and one importing a non-entry path', () => {
    expect(checkTsBlocks('```ts\nconst a = 1;\n```\n', read, entries)).toEqual([expect.stringMatching(/README\.md:1 has no "<!-- file:/)]);
    expect(checkTsBlocks(block('examples/readme/none.ts', 'x'), read, entries)).toEqual([
      expect.stringMatching(/names examples\/readme\/none\.ts, which does not exist/),
    ]);
    const bad = checkTsBlocks(block('examples/readme/bad.ts', "import { defineTool } from '../../src/core/define-tool.ts';"), read, entries);
    expect(bad).toEqual([expect.stringMatching(/imports \.\.\/\.\.\/src\/core\/define-tool\.ts, which is no package entry/)]);
  });

  it('finds relative links outside code blocks only', () => {
    const markdown = 'see [a](docs/a.md#x) and [b](https://x.org) and [c](#top)\n```\n[d](nope.md)\n```\n![img](docs/images/i.png)\n';
    expect(relativeLinks(markdown)).toEqual([
      { target: 'docs/a.md', line: 1 },
      { target: 'docs/images/i.png', line: 5 },
    ]);
  });
});
