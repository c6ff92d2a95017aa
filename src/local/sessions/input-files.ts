/**
 * The input files of `stepwise run`: `--input` / `--email` paths expanded to files, and the JSON
 * inputs a `.json` or `.jsonl` file holds.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { InvalidInputError } from '../../core/errors.ts';

/** The input file kinds `run --input` reads: one JSON object per `.json` file, one per line of a `.jsonl` file. */
const INPUT_EXTENSIONS = ['.json', '.jsonl'];

/** One input of a file: its value, or why it has none; `label` names it in results. */
export interface ParsedInput {
  label: string;
  value?: unknown;
  problem?: string;
}

/**
 * The input files of `--input` / `--email` arguments, in order: a file as given, a directory as
 * every file with one of `extensions` in it (sorted by name).
 * @throws InvalidInputError for a path that does not exist or a folder without such files: nothing
 *   is started when an input is missing.
 */
export function expandInputPaths(paths: readonly string[], extensions: readonly string[] = INPUT_EXTENSIONS): string[] {
  return paths.flatMap((path) => {
    if (!existsSync(path)) throw new InvalidInputError(`input not found: ${path}`);
    if (!statSync(path).isDirectory()) return [path];
    const files = readdirSync(path)
      .filter((name) => extensions.includes(extname(name).toLowerCase()))
      .sort()
      .map((name) => join(path, name));
    if (files.length === 0)
      throw new InvalidInputError(`no inputs in ${path} (looked for ${extensions.map((e) => `*${e}`).join(', ')})`);
    return files;
  });
}

/** The parsed inputs of one `.json` (one object) or `.jsonl` (one object per line) file, with how to name each in results. */
export function readInputs(file: string): ParsedInput[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return [{ label: file, problem: `unreadable: ${(e as Error).message}` }];
  }
  const parse = (source: string, label: string) => {
    try {
      return { label, value: JSON.parse(source) as unknown };
    } catch (e) {
      return { label, problem: `not JSON: ${(e as Error).message}` };
    }
  };
  if (extname(file).toLowerCase() !== '.jsonl') return [parse(text, file)];
  return text
    .split('\n')
    .map((line, i) => ({ line, label: `${file}:${i + 1}` }))
    .filter(({ line }) => line.trim())
    .map(({ line, label }) => parse(line, label));
}
