import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../src/cli/program.ts';
import { PROJECT_ROOT } from '../src/core/paths.ts';
import { codeBlocks, markdownFiles, readMarkdown } from './docs/markdown.ts';

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };

/** Words of the project's own planning that mean nothing to a reader. */
const INTERNAL = /\bseed\b|\bseed's\b|\bAC\d+\b|\bstory \d|\bdecision \d/i;
/** What a random-number generator starts from (a random seed, fast-check's seed) is no planning word. */
const RANDOM_SEED = /\b(?:random|rng|fast-check(?:'s)?) seeds?\b/gi;

/** The TypeScript files of these folders of the repository, relative to its root (test data and build output aside). */
function sourceFiles(...folders: string[]): string[] {
  return folders.flatMap((folder) =>
    readdirSync(join(PROJECT_ROOT, folder), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(m?ts|tsx)$/.test(f) && !/(^|\/)(node_modules|dist|cdk\.out|corpus)\//.test(f))
      .map((f) => join(folder, f)),
  );
}

/**
 * The comments of a TypeScript file: the trivia before each of its tokens, as TypeScript parses it (a regex is no
 * comment).
 */
function comments(text: string, file: string): string[] {
  const kind = file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found = new Map<number, string>();
  const visit = (node: ts.Node): void => {
    if (ts.isJSDoc(node)) return; // its text is the trivia of the token after it
    const children = node.getChildren(source);
    if (children.length > 0) {
      for (const child of children) visit(child);
      return;
    }
    const leading = ts.getLeadingCommentRanges(text, node.pos) ?? [];
    const trailing = ts.getTrailingCommentRanges(text, node.pos) ?? [];
    for (const range of [...leading, ...trailing]) found.set(range.pos, text.slice(range.pos, range.end));
  };
  visit(source);
  return [...found.values()];
}

/**
 * The names of a test file's tests and groups: the string a `describe`, `it` or `test` call (or its `.each(...)`) opens
 * with.
 */
const TEST_NAME =
  /\b(?:describe|it|test)(?:\.(?:skip|only|concurrent|sequential|todo|fails))?(?:\.each\([^\n]*?\))?\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g;
const testNames = (text: string) => [...text.matchAll(TEST_NAME)].map((m) => m[2]!);

/** Where `text` uses a planning word (a random seed aside), or undefined. */
const planningWord = (text: string) => text.replace(RANDOM_SEED, '').match(INTERNAL)?.[0];

describe('README', () => {
  it('has a Quick start of two command lines: install + demo, and the tests', () => {
    const quickStart = readme.split('## Quick start')[1]!.split('```bash\n')[1]!.split('```')[0]!;
    expect(quickStart.trim().split('\n')).toEqual(['npm install && npm run demo', 'npm test']);
  });

  it('is at most 15 KB', () => {
    expect(statSync(join(PROJECT_ROOT, 'README.md')).size).toBeLessThanOrEqual(15 * 1024);
  });

  it('says the Node.js versions package.json supports', () => {
    expect(pkg.engines.node).toBe('>=22');
    expect(readme).toContain('Node.js 22 or later');
    expect(readme).not.toMatch(/Node\.js 20\+/);
  });
});

describe('README and docs', () => {
  it('close every code fence where it ends (an unclosed fence swallows the headings after it)', () => {
    for (const file of markdownFiles()) {
      const text = readMarkdown(file);
      for (const block of codeBlocks(text)) {
        const where = `${file}: the fence opened on line ${block.position!.start.line}`;
        expect(text.slice(0, block.position!.end.offset), where).toMatch(/(```|~~~)\s*$/);
        expect(block.value, where).not.toMatch(/^(```|#{2,6} )/m);
      }
    }
  });

  it('use no internal planning words, nor does any command help', async () => {
    for (const file of markdownFiles()) expect(readMarkdown(file), file).not.toMatch(INTERNAL);
    const program = await createProgram();
    const helps = (c: typeof program): string[] => [c.helpInformation(), ...c.commands.flatMap(helps)];
    for (const help of helps(program)) expect(help).not.toMatch(INTERNAL);
  });
});

describe('the code', () => {
  it('uses no internal planning words in the comments of the engine, the examples, the scripts and the tests', () => {
    const found = sourceFiles('src', 'test', 'bin', 'lambdas', 'infra', 'docs/generate').flatMap((file) =>
      comments(readFileSync(join(PROJECT_ROOT, file), 'utf8'), file).flatMap((c) => {
        const line = c.split('\n').find((l) => planningWord(l));
        return planningWord(c) ? [`${file}: ${(line ?? c).replace(/^\s*(\/\*\*?|\*|\/\/)\s*/, '').slice(0, 100)}`] : [];
      }),
    );
    expect(found).toEqual([]);
  });

  it('names no test nor any file after a planning word', () => {
    const files = sourceFiles('src', 'test', 'bin', 'lambdas', 'infra');
    expect(files.filter((file) => planningWord(file))).toEqual([]);
    const names = files
      .filter((f) => f.startsWith('test/'))
      .flatMap((file) => testNames(readFileSync(join(PROJECT_ROOT, file), 'utf8')).map((name) => `${file}: ${name}`));
    expect(names.length).toBeGreaterThan(1000);
    expect(names.filter((name) => planningWord(name.slice(name.indexOf(': ') + 2)))).toEqual([]);
  });

  it('uses no planning words in the example definitions and the contributing guide', () => {
    const definitions = readdirSync(join(PROJECT_ROOT, 'statemachines'), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(md|ya?ml)$/.test(f))
      .map((f) => join('statemachines', f));
    for (const file of [...definitions, 'CONTRIBUTING.md'])
      expect(planningWord(readFileSync(join(PROJECT_ROOT, file), 'utf8')), file).toBeUndefined();
  });

  it('the checks find a planning word in a comment and a test name, and pass a random seed (they can fail)', () => {
    const text = "// fast-check's seed 42 replays it\n/** The rule of decision 7. */\nit('covers AC3', () => {});\n";
    expect(comments(text, 'x.ts').map(planningWord)).toEqual([undefined, 'decision 7']);
    expect(testNames(text).map(planningWord)).toEqual(['AC3']);
  });
});
