/**
 * The public API is a contract: `package.json` `exports` names the entry points, and the examples
 * (the example workflows, the project's config and CDK app) and the templates of `stepwise new` use
 * only those, exactly as a user's project does. A deep import into the engine would work here and
 * break in every installed project.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/core/paths.ts';

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { types: string; default: string }>;
};
const tsconfig = JSON.parse(readFileSync(join(PROJECT_ROOT, 'tsconfig.json'), 'utf8')) as {
  compilerOptions: { paths: Record<string, string[]> };
};
const entryPoints = Object.keys(pkg.exports)
  .filter((k) => k !== './package.json')
  .map((k) => pkg.name + k.slice(1));

/** Every TypeScript file under `dir`. */
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const path = join(dir, f);
    return statSync(path).isDirectory() ? sources(path) : /\.m?ts$/.test(f) ? [path] : [];
  });

/** The module specifiers a file imports or re-exports (static and dynamic). */
const specifiers = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)].map(
    (m) => m[1]!,
  );

/**
 * Why `specifier` in `file` is not allowed, or undefined: a relative import must stay inside
 * `home`; a bare one is a package (not a path into this one) or one of the package's entry points.
 */
function problem(file: string, specifier: string, home: string): string | undefined {
  if (specifier.startsWith('.')) {
    const target = resolve(dirname(file), specifier);
    return target.startsWith(`${home}/`) || target === home
      ? undefined
      : `reaches outside ${relative(PROJECT_ROOT, home) || '.'}: ${specifier}`;
  }
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return undefined;
  if (specifier === pkg.name || specifier.startsWith(`${pkg.name}/`))
    return entryPoints.includes(specifier) ? undefined : `not an entry point of ${pkg.name}: ${specifier}`;
  return undefined;
}

/** The files a user's project would own, each with the folder its relative imports must stay in. */
function userFiles(): { file: string; home: string }[] {
  const workflows = join(PROJECT_ROOT, 'lambdas', 'workflows');
  const templates = join(PROJECT_ROOT, 'src', 'cli', 'templates');
  return [
    ...readdirSync(workflows).flatMap((w) =>
      sources(join(workflows, w)).map((file) => ({ file, home: join(workflows, w) })),
    ),
    { file: join(PROJECT_ROOT, 'stepwise.config.ts'), home: join(PROJECT_ROOT, 'stepwise.config.ts') },
    // The CDK app imports the project's config, which sits at the project root.
    { file: join(PROJECT_ROOT, 'infra', 'app.ts'), home: join(PROJECT_ROOT, 'stepwise.config.ts') },
    ...readdirSync(templates).flatMap((t) =>
      sources(join(templates, t)).map((file) => ({ file, home: join(templates, t) })),
    ),
  ];
}

describe('the public API', () => {
  it('is the entry points package.json exports, each with types, resolved to the source here the same way', () => {
    expect(entryPoints).toEqual([
      'stepwise',
      'stepwise/cdk',
      'stepwise/config',
      'stepwise/testing',
      'stepwise/cli',
      'stepwise/embeddings',
      'stepwise/templates',
      'stepwise/dynamodb',
    ]);
    for (const key of Object.keys(pkg.exports).filter((k) => k !== './package.json')) {
      const target = pkg.exports[key] as { types: string; default: string };
      expect(target.types.replace(/\.d\.ts$/, '.js'), key).toBe(target.default);
      const source = target.default.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts');
      expect(tsconfig.compilerOptions.paths[pkg.name + key.slice(1)], key).toEqual([source]);
    }
  });

  it('is all the examples and templates use: no deep import into the engine', () => {
    const found = userFiles().flatMap(({ file, home }) =>
      specifiers(file).flatMap((s) => {
        const why = problem(file, s, home);
        return why ? [`${relative(PROJECT_ROOT, file)}: ${why}`] : [];
      }),
    );
    expect(found).toEqual([]);
    expect(userFiles().length).toBeGreaterThan(40);
  });

  it('catches a deep import (the check can fail)', () => {
    const file = join(PROJECT_ROOT, 'lambdas/workflows/warranty-email/tools/create-ticket.ts');
    const home = join(PROJECT_ROOT, 'lambdas/workflows/warranty-email');
    expect(problem(file, '../../../lib/errors.ts', home)).toMatch(
      /^reaches outside lambdas\/workflows\/warranty-email/,
    );
    expect(problem(file, 'stepwise/dist/core/errors.js', home)).toMatch(/^not an entry point/);
    expect(problem(file, '../tickets.ts', home)).toBeUndefined();
    expect(problem(file, 'stepwise', home)).toBeUndefined();
  });
});
