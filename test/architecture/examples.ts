/**
 * The line between the engine's tests and the examples: `test/<layer>/` (with the helpers and fixtures it shares)
 * names no example workflow of this repository and imports nothing of the examples' project (`lambdas/`,
 * `statemachines/`, `infra/`, `stepwise.config.ts` at the root). The engine's tests run on the engine's own fixtures
 * (`test/fixtures/`), so changing an example never breaks them; `test/examples/` alone tests the examples.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { LAYERS } from '../../docs/generate/architecture.ts';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { listLifecycles } from '../../src/definitions/lifecycle/loader.ts';
import { listWorkflows } from '../../src/definitions/workflow/loader.ts';
import { LOCAL_OUTPUT } from '../support/fixture-project.ts';

/** The folders of the engine's tests (one per layer of `src/`) and of the helpers and fixtures they share. */
export const ENGINE_TEST_DIRS: readonly string[] = [
  ...LAYERS.map((layer) => `test/${layer.name}`),
  'test/support',
  'test/fixtures',
];

/** The examples of this repository: the workflows and lifecycles of its own `statemachines/`. */
export const exampleNames = (root = PACKAGE_ROOT): string[] =>
  [...listWorkflows(join(root, 'statemachines')), ...listLifecycles(join(root, 'statemachines'))].sort();

/**
 * How a name is written in code and prose: `warranty-email`, `warranty_email`, `WarrantyEmail`, `warrantyEmail`,
 * `WARRANTY_EMAIL`, `warranty email`. A one-word name (`investigation`) counts where it is a name, not a word:
 * quoted, in a path or a stack name.
 */
function namePattern(name: string): RegExp {
  const parts = name.split('-');
  if (parts.length > 1) return new RegExp(parts.join('[-_ ]?'), 'gi');
  return new RegExp(`(?<=["'\`/]|Stepwise-?)${name}(?=["'\`/.-]|$)`, 'gim');
}

/** Every file under `dirs` (relative to `root`), as paths relative to `root`. */
function filesUnder(dirs: readonly string[], root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      if (LOCAL_OUTPUT.test(name)) return [];
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : [relative(root, path).split(sep).join('/')];
    });
  return dirs.flatMap((dir) => walk(resolve(root, dir)));
}

const TEXT = /\.(m?[jt]sx?|json|jsonl|ya?ml|md|eml|txt)$/;

/** Each place an example is named in the text files under `dirs`: `<file>:<line>: <what>`. */
export function exampleMentions(dirs: readonly string[], names: readonly string[], root = PACKAGE_ROOT): string[] {
  const patterns = names.map(namePattern);
  return filesUnder(dirs, root)
    .filter((file) => TEXT.test(file))
    .flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => patterns.flatMap((p) => [...line.matchAll(p)].map((m) => `${file}:${i + 1}: ${m[0]}`))),
    );
}

/** Each import, in the code under `dirs`, of a file of the examples' project: `<file> → <path>`. */
export function exampleProjectImports(dirs: readonly string[], root = PACKAGE_ROOT): string[] {
  const project = ['lambdas/', 'statemachines/', 'infra/'];
  return filesUnder(dirs, root)
    .filter((file) => /\.m?[jt]sx?$/.test(file))
    .flatMap((file) =>
      ts
        .preProcessFile(readFileSync(join(root, file), 'utf8'), true, true)
        .importedFiles.map((i) => i.fileName)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) =>
          relative(root, resolve(dirname(join(root, file)), spec))
            .split(sep)
            .join('/'),
        )
        .filter((target) => target === 'stepwise.config.ts' || project.some((dir) => target.startsWith(dir)))
        .map((target) => `${file} → ${target}`),
    );
}
