/** `stepwise new` on its own: the folder it makes, the `cd` line it prints, and the arguments it refuses. */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as newCommand from '../../src/cli/commands/new.ts';
import { projectFiles, TEMPLATES_DIR, templates, workflowFiles } from '../../src/cli/project-template.ts';
import { runCli, useCliCapture } from '../support/cli.ts';
import { useTempDirs } from '../support/tmp.ts';

const io = useCliCapture();
const tempDir = useTempDirs('stepwise-new-');
const create = (...args: string[]) => runCli([newCommand], 'new', ...args);

describe('stepwise new', () => {
  it('prints a cd line the shell runs as written, for a folder with a space and a quote', async () => {
    const dir = join(tempDir(), "it's my agents");
    expect(await create(dir, '--name', 'my-agents')).toBe(0);
    const cd = /^ {2}cd (.+)$/m.exec(io.out)![1]!;
    const shell = spawnSync('sh', ['-c', `cd ${cd} && pwd -P`], { encoding: 'utf8' });
    expect(shell.stdout.trim()).toBe(realpathSync(dir));
  });

  it('leaves a plain folder name unquoted', async () => {
    const dir = join(tempDir(), 'agents');
    expect(await create(dir)).toBe(0);
    expect(io.out).not.toMatch(/^ {2}cd '/m);
  });

  it('pins the Node.js types to the oldest Node.js the package supports, and never tells cdk synth --all', async () => {
    const dir = join(tempDir(), 'typed');
    expect(await create(dir)).toBe(0);
    const engines = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')).engines.node;
    const oldest = /^>=(\d+)/.exec(engines)![1];
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).devDependencies['@types/node']).toBe(
      `^${oldest}`,
    );
    // The CDK CLI answers "Unknown option(s): --all" to synth.
    expect(io.out).toContain('npx cdk synth -c env=dev');
    expect(io.out).not.toMatch(/cdk synth[^\n]*--all/);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).not.toMatch(/cdk synth[^\n]*--all/);
  });

  it('writes a version range given with --stepwise into package.json as given', async () => {
    const dir = join(tempDir(), 'ranged');
    expect(await create(dir, '--stepwise', '>=0.2.0 <0.3.0')).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies.stepwise).toBe('>=0.2.0 <0.3.0');
  });

  it.each([
    [
      'a spec that would break package.json',
      '1.0.0", "evil": "1',
      /^stepwise: --stepwise "1\.0\.0\\", .*: not a version range/,
    ],
    ['an empty spec', '', /^stepwise: --stepwise "": not a version range/],
    [
      'a file: that does not exist',
      'file:./no-such-stepwise.tgz',
      /^stepwise: --stepwise file:\.\/no-such-stepwise\.tgz: no such file or folder /,
    ],
  ])('refuses %s in one line, and writes nothing', async (_what, spec, message) => {
    const parent = tempDir();
    expect(await create(join(parent, 'p'), '--stepwise', spec)).toBe(1);
    expect(io.err).toMatch(message);
    expect(io.err.trim().split('\n')).toHaveLength(1);
    expect(readdirSync(parent)).toEqual([]);
  });

  it('refuses a folder name longer than a file system takes, in one line, not ENAMETOOLONG', async () => {
    const parent = tempDir();
    const long = 'a'.repeat(300);
    expect(await create(join(parent, long), '--name', 'short')).toBe(1);
    expect(io.err).toMatch(/^stepwise: .*: the folder name "a{20}…" is 300 bytes; file systems take at most 255\n$/);
    expect(await create(join(parent, long))).toBe(1);
    expect(io.err).not.toContain('ENAMETOOLONG');
    expect(existsSync(join(parent, long.slice(0, 10)))).toBe(false);
  });

  it('refuses a package name longer than npm takes', async () => {
    const dir = join(tempDir(), 'b'.repeat(215));
    expect(await create(dir)).toBe(1);
    expect(io.err).toMatch(/^stepwise: package name "b{215}": at most 214 /);
  });
});

describe('the templates, overlays on one base', () => {
  const filesOf = (template: string) => projectFiles({ template, name: 'p' });
  const names = templates().map((t) => t.name);
  /** The template that makes the workflow `workflow`. */
  const makes = (workflow: string) => names.find((t) => `statemachines/${workflow}/workflow.yaml` in filesOf(t))!;
  /** The workflow SES mail starts in a template's project (an email trigger in its manifest), if any. */
  const mailWorkflow = (template: string) =>
    Object.entries(filesOf(template))
      .filter(([file, text]) => /^statemachines\/[^/]+\/workflow\.yaml$/.test(file) && /- type: email$/m.test(text))
      .map(([file]) => file.split('/')[1]!)
      .at(0);

  it('are the folders of templates/ but the base and the shared pieces', () => {
    expect(names).toEqual(['api', 'email', 'lifecycle', makes('orders')]);
    const folders = readdirSync(TEMPLATES_DIR, { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(folders.map((d) => d.name).sort()).toEqual(['_project', '_shared', ...names]);
  });

  it.each(names)('%s: every include is filled in and every section kept or left out', (t) => {
    for (const [file, text] of Object.entries(filesOf(t))) expect(text, file).not.toMatch(/\{\{[#/>]/);
  });

  it("keeps stepwise.config.ts's email settings in the email templates only, naming the workflow mail starts", () => {
    const config = (t: string) => filesOf(t)['stepwise.config.ts']!;
    expect(names.map(mailWorkflow)).toEqual([undefined, 'inbox', undefined, 'orders']);
    expect(config('api')).not.toMatch(/email: \{|\{\{/);
    for (const t of names) {
      const workflow = mailWorkflow(t);
      if (!workflow) {
        expect(config(t)).toBe(config('api'));
        continue;
      }
      expect(config(t)).toContain(`starts the ${workflow} workflow.`);
      expect(config(t).match(/receivingDomain: 'support\.example\.com'/g)).toHaveLength(2);
      expect(config(t).replaceAll(/\n {6}\/\/ SES inbound.*|\n {6}email: \{[^}]*\},/g, '')).toBe(config('api'));
    }
  });

  it('writes the one hand-off step into every workflow that falls back to it, and stepwise init too', () => {
    const handOff = readFileSync(join(TEMPLATES_DIR, '_shared', 'hand-off.ts'), 'utf8');
    expect(filesOf('api')['lambdas/workflows/support-desk/steps/hand-off.ts']).toBe(handOff);
    expect(filesOf('email')['lambdas/workflows/inbox/steps/hand-off.ts']).toBe(handOff);
    expect(filesOf(makes('orders'))['lambdas/workflows/orders/steps/hand-off.ts']).toBe(handOff);
    expect(workflowFiles('billing-desk', '/p')['lambdas/workflows/billing-desk/steps/hand-off.ts']).toBe(handOff);
    expect(Object.keys(filesOf('lifecycle')).filter((f) => f.startsWith('lambdas/'))).toEqual([]);
  });
});
