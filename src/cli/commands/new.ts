import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { type Command, Option } from 'commander';
import { InvalidInputError, StepwiseError } from '../../core/errors.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import { isEmptyDir, projectFiles, templates } from '../project-template.ts';

/** npm package names: lower case, URL-safe, optionally scoped, at most 214 characters. */
const PACKAGE_NAME = /^(?=.{1,214}$)(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;
/** The longest file name most file systems take, in bytes. */
const MAX_NAME_BYTES = 255;

// What npm takes as a dependency: a version range (`^0.2.0`, `>=0.2 <0.3`, `0.2.x || 0.3.x`), a dist-tag, or a
// `file:`, `npm:`, git or URL spec. It goes into package.json as written, so nothing else (no quote) gets there.
const COMPARATOR = String.raw`(?:[~^]|[<>]=?|=)?v?(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){0,2}(?:-[\w.-]+)?(?:\+[\w.-]+)?`;
const VERSION_RANGE = new RegExp(`^${COMPARATOR}(?:(?: - | ?\\|\\| ?| )${COMPARATOR})*$`);
const DIST_TAG = /^[a-z][a-z0-9._-]*$/i;
const PROTOCOL_SPEC = /^(?:npm|github|gitlab|bitbucket|git|git\+(?:ssh|https?|file)|https?):[^\s"\\]+$/;

/** `--stepwise` as package.json holds it: a relative `file:` path made relative to the project. @throws InvalidInputError */
function stepwiseSpec(spec: string, root: string): string {
  if (spec.startsWith('file:')) {
    const target = resolve(spec.slice('file:'.length));
    if (!existsSync(target)) throw new InvalidInputError(`--stepwise ${spec}: no such file or folder ${target}`);
    const file = `file:${relative(root, target).split(sep).join('/') || '.'}`;
    if (/["\\\p{Cc}]/u.test(file))
      throw new InvalidInputError(`--stepwise ${spec}: a path with a quote or control character`);
    return file;
  }
  if (VERSION_RANGE.test(spec) || DIST_TAG.test(spec) || PROTOCOL_SPEC.test(spec)) return spec;
  throw new InvalidInputError(
    `--stepwise ${JSON.stringify(spec)}: not a version range (^0.2.0), a dist-tag, or a file:, npm:, git or https: spec`,
  );
}

/** A path as one POSIX shell word, for the `cd` line: quoted unless it needs no quoting. */
const shellWord = (path: string): string =>
  /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;

interface NewFlags {
  template: string;
  name?: string;
  stepwise?: string;
  install?: boolean;
  json?: boolean;
}

/**
 * The folder to create and the package name, checked before anything is written.
 * @throws InvalidInputError for a folder name no file system takes, a name npm refuses, a folder that is not empty.
 */
function checkedTarget(dir: string, givenName: string | undefined): { root: string; name: string } {
  const root = resolve(dir);
  const tooLong = root.split(sep).find((part) => Buffer.byteLength(part) > MAX_NAME_BYTES);
  if (tooLong !== undefined)
    throw new InvalidInputError(
      `${dir}: the folder name "${tooLong.slice(0, 20)}…" is ${Buffer.byteLength(tooLong)} bytes; file systems take at most ${MAX_NAME_BYTES}`,
    );
  const name =
    givenName ??
    basename(root)
      .toLowerCase()
      .replaceAll(/[^a-z0-9._-]+/g, '-');
  if (!PACKAGE_NAME.test(name))
    throw new InvalidInputError(
      `package name "${name}": at most 214 lower-case letters, digits, ., _ and - (set it with --name)`,
    );
  if (!isEmptyDir(root)) throw new InvalidInputError(`${dir} exists and is not empty: choose a new folder`);
  return { root, name };
}

export function register(program: Command): void {
  const command = program
    .command('new')
    .description(
      'Create a project of your own that depends on Stepwise: package.json, tsconfig.json, cdk.json, infra/app.ts, ' +
        'stepwise.config.ts (your environments), statemachines/, lambdas/workflows/, a test that runs every workflow’s evals, ' +
        'README.md and .gitignore, with the runnable workflows or lifecycle of the template.',
    )
    .argument('<dir>', 'the folder to create (missing or empty)')
    .addOption(
      new Option('--template <template>', 'what the project starts with')
        .choices(templates().map((t) => t.name))
        .default('api'),
    )
    .option('--name <name>', 'the package name (default: the folder name)')
    .option(
      '--stepwise <spec>',
      'how the project depends on Stepwise, e.g. file:../stepwise-0.2.0.tgz (default: ^<this version>)',
    )
    .option('--install', 'run npm install in the new project')
    .option('--json', 'print { dir, template, files } as JSON')
    .addHelpText(
      'after',
      `\nTemplates:\n${templates()
        .map((t) => `  ${t.name.padEnd(10)} ${t.title}`)
        .join('\n')}\n`,
    );
  withExamples(command, [
    'stepwise new my-agents',
    'stepwise new my-inbox --template email',
    'stepwise new my-shop --template order-support',
    'stepwise new orders --template lifecycle --stepwise file:../stepwise-0.2.0.tgz --json',
  ]);
  command.action(
    action((dir: string, flags: NewFlags) => {
      const { root, name } = checkedTarget(dir, flags.name);
      const stepwise = flags.stepwise === undefined ? undefined : stepwiseSpec(flags.stepwise, root);
      const files = projectFiles({ template: flags.template, name, ...(stepwise && { stepwise }) });
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        writeFileSync(join(root, file), text);
      }
      if (flags.install) {
        const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund'], {
          cwd: root,
          stdio: flags.json ? ['ignore', 'ignore', 'inherit'] : 'inherit',
        });
        if (npm.status !== 0)
          throw new StepwiseError(`npm install failed in ${dir} (exit code ${npm.status ?? npm.signal})`);
      }
      if (flags.json) return printJson({ dir: root, template: flags.template, files: Object.keys(files) });
      const cd = relative(process.cwd(), root) || '.';
      process.stdout.write(
        [
          ...Object.keys(files).map((f) => `  created ${join(cd, f)}`),
          '',
          `Created ${name} from the ${flags.template} template. Next:`,
          `  cd ${shellWord(cd)}`,
          ...(flags.install ? [] : ['  npm install']),
          '  npx stepwise validate',
          '  npm test',
          '  npx cdk synth -c env=dev',
          '',
        ].join('\n'),
      );
    }),
  );
}
