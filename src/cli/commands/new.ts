import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { InvalidInputError, StepwiseError } from '../../core/errors.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import { isEmptyDir, projectFiles, templates } from '../project-template.ts';

/** npm package names: lower case, URL-safe, optionally scoped. */
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

interface NewFlags {
  template: string;
  name?: string;
  stepwise?: string;
  install?: boolean;
  json?: boolean;
}

export function register(program: Command): void {
  const command = program
    .command('new')
    .description(
      'Create a project of your own that depends on Stepwise: package.json, tsconfig.json, cdk.json, infra/app.ts, ' +
        'stepwise.config.ts (your environments), statemachines/, lambdas/workflows/, a test that runs every workflow’s evals, ' +
        'README.md and .gitignore, with one runnable workflow or lifecycle from the template.',
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
    'stepwise new orders --template lifecycle --stepwise file:../stepwise-0.2.0.tgz --json',
  ]);
  command.action(
    action((dir: string, flags: NewFlags) => {
      const root = resolve(dir);
      const name =
        flags.name ??
        basename(root)
          .toLowerCase()
          .replaceAll(/[^a-z0-9._-]+/g, '-');
      if (!PACKAGE_NAME.test(name))
        throw new InvalidInputError(
          `package name "${name}": lower-case letters, digits, ., _ and - (set it with --name)`,
        );
      if (!isEmptyDir(root)) throw new InvalidInputError(`${dir} exists and is not empty: choose a new folder`);
      // A relative file: spec is relative to the project, not to where the command runs.
      const stepwise = flags.stepwise?.startsWith('file:')
        ? `file:${relative(root, resolve(flags.stepwise.slice(5))) || '.'}`
        : flags.stepwise;
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
          `  cd ${cd}`,
          ...(flags.install ? [] : ['  npm install']),
          '  npx stepwise validate',
          '  npm test',
          '  npx cdk synth -c env=dev --all',
          '',
        ].join('\n'),
      );
    }),
  );
}
