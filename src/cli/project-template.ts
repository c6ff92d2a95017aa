/**
 * The projects `stepwise new` creates and the workflow `stepwise init` adds, from the file trees in
 * `templates/`: `_project/` is every project's skeleton (package.json, tsconfig.json, cdk.json,
 * infra/app.ts, stepwise.config.ts, the eval test, .gitignore), and each other folder a template
 * laid over it (README.md, its workflow or lifecycle, and a stepwise.config.ts of its own when it
 * needs settings the skeleton's has not, such as the email template's domain). Nothing in a created project names a
 * path
 * of the package: it depends on the package and imports its entry points.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { InvalidInputError } from '../core/errors.ts';
import { PACKAGE_ROOT } from '../core/paths.ts';
import { SCHEMAS_DIR } from '../definitions/kinds.ts';
import { VERSION } from './program.ts';

/** Where the templates are: in the package, beside the CLI's source (they are not compiled). */
export const TEMPLATES_DIR = join(PACKAGE_ROOT, 'src', 'cli', 'templates');
const SKELETON = '_project';

/** Files to write, by path relative to the project root. */
export type Files = Record<string, string>;

/** The templates `stepwise new --template` offers, with the first line of their README. */
export function templates(): { name: string; title: string }[] {
  return readdirSync(TEMPLATES_DIR)
    .filter((d) => d !== SKELETON && statSync(join(TEMPLATES_DIR, d)).isDirectory())
    .sort()
    .map((name) => ({
      name,
      title: readFileSync(join(TEMPLATES_DIR, name, 'README.md'), 'utf8')
        .split('\n')[0]!
        .replace(/^#\s*/, ''),
    }));
}

/**
 * Every file under `dir`, by path relative to it. npm leaves `.gitignore` files out of packages: `gitignore` is written
 * as `.gitignore`.
 */
function readTree(dir: string): Files {
  const files: Files = {};
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) continue;
    const rel = relative(dir, path).split('\\').join('/');
    files[rel === 'gitignore' ? '.gitignore' : rel] = readFileSync(path, 'utf8');
  }
  return files;
}

/** The package's own version ranges, which a new project depends on (so it gets what this version was tested with). */
function dependencyRanges(stepwise: string): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as Record<
    string,
    Record<string, string> | undefined
  >;
  const range = (name: string) => {
    // The Node.js types of the oldest Node.js the package supports (`engines`), not of the one it was built with.
    const oldest = /^>=\s*(\d+)/.exec(pkg.engines?.node ?? '')?.[1];
    if (name === '@types/node' && oldest) return `^${oldest}`;
    const found = pkg.peerDependencies?.[name] ?? pkg.dependencies?.[name] ?? pkg.devDependencies?.[name];
    if (!found) throw new Error(`the package declares no version of ${name}`);
    return /^\d/.test(found) ? `^${found}` : found;
  };
  return Object.fromEntries([
    ['stepwise', stepwise],
    ...['aws-cdk-lib', 'constructs', 'zod', '@types/node', 'aws-cdk', 'tsx', 'typescript', 'vitest'].map((n) => [
      n,
      range(n),
    ]),
  ]);
}

export interface NewProjectOptions {
  /** The template (a folder of `templates/`). @default 'api' */
  readonly template?: string;
  /** The package name. */
  readonly name: string;
  /** How the project depends on Stepwise: a version range, `file:<tarball>`, ... @default `^<this version>` */
  readonly stepwise?: string;
}

/** The files of a new project. @throws InvalidInputError for an unknown template. */
export function projectFiles(options: NewProjectOptions): Files {
  const template = options.template ?? 'api';
  const known = templates().map((t) => t.name);
  if (!known.includes(template))
    throw new InvalidInputError(`unknown template "${template}" (templates: ${known.join(', ')})`);
  const tokens: Record<string, string> = { name: options.name, ...dependencyRanges(options.stepwise ?? `^${VERSION}`) };
  const files = { ...readTree(join(TEMPLATES_DIR, SKELETON)), ...readTree(join(TEMPLATES_DIR, template)) };
  return Object.fromEntries(
    Object.entries(files).map(([path, text]) => [
      path,
      text.replaceAll(/\{\{([@\w/.-]+)\}\}/g, (token, key: string) => tokens[key] ?? token),
    ]),
  );
}

/** A template's editor schema line (`# yaml-language-server: $schema=...`), its path group 1 and the schema file group 2. */
const SCHEMA_LINE = /^(# yaml-language-server: \$schema=)(\S*?)([^/\s]+\.schema\.json)$/m;

/**
 * The example workflow of the `api` template, renamed: what `stepwise init <name>` adds to the
 * project at `root`. Its schema lines name the schemas of the package this CLI runs from.
 */
export function workflowFiles(name: string, root: string): Files {
  const base = join(TEMPLATES_DIR, 'api');
  const files: Files = {};
  for (const folder of ['statemachines', 'lambdas/workflows'])
    for (const [path, text] of Object.entries(readTree(join(base, folder, 'support-desk')))) {
      const file = `${folder}/${name}/${path}`;
      const schemas = relative(dirname(join(root, file)), SCHEMAS_DIR)
        .split('\\')
        .join('/');
      files[file] = text
        .replaceAll('support-desk', name)
        .replace(SCHEMA_LINE, (_, line: string, _path: string, schema: string) => `${line}${schemas}/${schema}`);
    }
  return files;
}

/** Whether `dir` can take a new project: missing or empty. */
export const isEmptyDir = (dir: string): boolean => !existsSync(dir) || readdirSync(dir).length === 0;
