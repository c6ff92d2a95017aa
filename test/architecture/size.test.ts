/**
 * The engine reads as small pieces: no source file of `src/` over 600 lines and no function over
 * 80 (any function-like node, arrow functions, methods, constructors and components included,
 * counted from its first line to its last). The templates `stepwise new` copies are a user's code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { importGraph, SRC_DIR } from '../../docs/generate/architecture.ts';

const MAX_FILE_LINES = 600;
const MAX_FUNCTION_LINES = 80;

/** Every function of `text` longer than `max` lines, as `<line> <name> (<lines> lines)`. */
function longFunctions(file: string, text: string, max = MAX_FUNCTION_LINES): string[] {
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: string[] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
      const named =
        node.name ??
        (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent) ? node.parent.name : undefined);
      if (lines > max)
        found.push(
          `${lineOf(node.getStart(source))} ${named?.getText(source) ?? ts.SyntaxKind[node.kind]} (${lines} lines)`,
        );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const files = Object.keys(importGraph(SRC_DIR)).map((file) => ({
  file,
  text: readFileSync(join(SRC_DIR, file), 'utf8'),
}));

describe('the size of the engine', () => {
  it(`has no source file over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map(({ file, text }) => ({ file, lines: text.split('\n').length }))
      .filter(({ lines }) => lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(files.flatMap(({ file, text }) => longFunctions(file, text).map((f) => `src/${file}:${f}`))).toEqual([]);
  });

  it('finds a long function of any kind (the check can fail)', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  a${i}();`).join('\n');
    const text = [
      `function named() {\n${body(3)}\n}`,
      `const arrow = () => {\n${body(4)}\n};`,
      `class C {\n  constructor() {\n${body(5)}\n  }\n}`,
    ].join('\n');
    expect(longFunctions('x.ts', text, 5)).toEqual(['6 arrow (6 lines)', '13 Constructor (7 lines)']);
  });
});
