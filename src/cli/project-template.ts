/**
 * The projects `stepwise new` creates and the workflow `stepwise init` adds, from the file trees in
 * `templates/`. Each template is an overlay on one base: `_project/` is every project (package.json,
 * tsconfig.json, cdk.json, infra/app.ts, stepwise.config.ts, the eval test, .gitignore), and a
 * template's folder (README.md, its workflows or lifecycle) is laid over it, a file of the template
 * replacing the base's at the same path. What several templates share is written once:
 *
 * - `// {{#key}}` … `// {{/key}}`: a section of a base file, kept (without its two marker lines)
 *   in the templates that set the token `key`, left out in the others. The email settings of
 *   `_project/stepwise.config.ts` are the `email` section, kept by the email templates.
 * - `// {{> file}}`: a line replaced by the file `_shared/<file>`. The hand-off code step the
 *   templates' workflows fall back to is `_shared/hand-off.ts`, each template's `hand-off.ts` that line.
 * - `{{key}}`: a token, replaced by its value: `name` (the package name), the dependency versions
 *   (`stepwise`, `aws-cdk-lib`, …) and the template's own tokens ({@link TEMPLATE_TOKENS}); an
 *   unknown one is left as written (`{{data.account.plan}}` in an offline rule is the step's own).
 *
 * Folders starting with `_` are not templates. `stepwise init` writes the `api` template's workflow,
 * composed the same way. Nothing in a created project names a path of the package: it depends on
 * the package and imports its entry points.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { InvalidInputError } from '../core/errors.ts';
import { PACKAGE_ROOT } from '../core/paths.ts';
import { SCHEMAS_DIR } from '../definitions/kinds.ts';
import { VERSION } from './program.ts';

/** Where the templates are: in the package, beside the CLI's source (they are not compiled). */
export const TEMPLATES_DIR = join(PACKAGE_ROOT, 'src', 'cli', 'templates');
const BASE = '_project';
/** The pieces `// {{> file}}` includes. */
const SHARED = '_shared';

/**
 * The tokens each template sets beside the name and the versions: `email`, the workflow SES mail starts (the
 * email settings of stepwise.config.ts).
 */
const TEMPLATE_TOKENS: Readonly<Record<string, Tokens>> = {
  email: { email: 'inbox' },
  'order-support': { email: 'orders' },
};

/** Files to write, by path relative to the project root. */
export type Files = Record<string, string>;
type Tokens = Readonly<Record<string, string>>;

/** The templates `stepwise new --template` offers, with the first line of their README. */
export function templates(): { name: string; title: string }[] {
  return readdirSync(TEMPLATES_DIR)
    .filter((d) => !d.startsWith('_') && statSync(join(TEMPLATES_DIR, d)).isDirectory())
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

/** A line `// {{> file}}`: the file of `_shared/` to write there (group 1). */
const INCLUDE = /^[ \t]*\/\/ \{\{> ([\w.-]+)\}\}\n/gm;
/** The lines from `// {{#key}}` to `// {{/key}}`: the token (group 1) and what is between (group 2). */
const SECTION = /^[ \t]*\/\/ \{\{#([\w-]+)\}\}\n([\s\S]*?)^[ \t]*\/\/ \{\{\/\1\}\}\n/gm;

/** A template laid over the base, its includes filled in and its sections kept or left out; tokens not replaced yet. */
function composed(template: string): Files {
  const tokens = TEMPLATE_TOKENS[template] ?? {};
  const files = { ...readTree(join(TEMPLATES_DIR, BASE)), ...readTree(join(TEMPLATES_DIR, template)) };
  return Object.fromEntries(
    Object.entries(files).map(([path, text]) => [
      path,
      text
        .replaceAll(INCLUDE, (_, file: string) => readFileSync(join(TEMPLATES_DIR, SHARED, file), 'utf8'))
        .replaceAll(SECTION, (_, key: string, body: string) => (Object.hasOwn(tokens, key) ? body : '')),
    ]),
  );
}

/** The files of a new project. @throws InvalidInputError for an unknown template. */
export function projectFiles(options: NewProjectOptions): Files {
  const template = options.template ?? 'api';
  const known = templates().map((t) => t.name);
  if (!known.includes(template))
    throw new InvalidInputError(`unknown template "${template}" (templates: ${known.join(', ')})`);
  const tokens: Tokens = {
    name: options.name,
    ...dependencyRanges(options.stepwise ?? `^${VERSION}`),
    ...TEMPLATE_TOKENS[template],
  };
  return Object.fromEntries(
    Object.entries(composed(template)).map(([path, text]) => [
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
  const api = Object.entries(composed('api'));
  const files: Files = {};
  for (const folder of ['statemachines', 'lambdas/workflows'])
    for (const [path, text] of api.filter(([path]) => path.startsWith(`${folder}/support-desk/`))) {
      const file = `${folder}/${name}/${path.slice(`${folder}/support-desk/`.length)}`;
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
