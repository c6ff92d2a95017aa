/**
 * Stepwise as a team adopts it: this repository packed with `npm pack`, a project created with
 * `stepwise new` in a temporary folder outside the repository, the tarball installed there (its
 * dependencies from the registry), and then, in that project, every command of a working day:
 * validate, run, eval, its own `npm test`, `cdk synth`. Nothing of the new project may name a path
 * of this repository, and a workflow's Lambda bundle holds that workflow only.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import { stopLocalService } from '../../src/local/cloud/local-service.ts';
import { type Ran, run } from '../support/project-copy.ts';

const work = mkdtempSync(join(tmpdir(), 'stepwise-package-'));
const project = join(work, 'helpdesk');
let tarball = '';
/** Milliseconds from `stepwise new` to a green `npm test` (printed, not asserted: machines are shared and noisy). */
const started = { at: 0 };

/** `stepwise <args>` as the installed package runs it in the new project. */
const stepwise = (...args: string[]) =>
  run(project, process.execPath, join(project, 'node_modules', '.bin', 'stepwise'), ...args);
const ok = (ran: Ran) => {
  if (ran.code !== 0) throw new Error(`exit ${ran.code}\n${ran.err}\n${ran.out}`.slice(0, 4000));
  return ran;
};
// A clean environment: nothing of this repository's (tsx's loader, vitest's variables) leaks into the project's commands.
const env = {
  PATH: process.env.PATH!,
  HOME: process.env.HOME!,
  // The machine's trust in a registry proxy, which npm needs on a Node.js other than the one that found its config.
  // (child_process leaves out a variable that is undefined).
  NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS,
  npm_config_globalconfig: process.env.npm_config_globalconfig,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  STEPWISE_NODE_WARNING: 'off',
  CI: 'true',
  // The installed CLI's warm local service, in a folder of this test's (stopped after it), not the user's.
  STEPWISE_LOCAL_SERVICE_DIR: join(work, 'local-service'),
};

beforeAll(async () => {
  execFileSync('npm', ['pack', '--pack-destination', work, '--silent'], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...env },
  });
  tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);
  started.at = Date.now();
  // The documented form for a tarball: npx installs it (and its dependencies) in its cache and runs its CLI.
  // --prefer-offline: the packages are in npm's cache from this repository's own install; no registry round trips.
  execFileSync(
    'npx',
    ['--yes', '--prefer-offline', '--package', tarball, 'stepwise', 'new', 'helpdesk', '--stepwise', `file:${tarball}`],
    {
      cwd: work,
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
    },
  );
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: project,
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  // A second workflow, added the way a user adds one: its code must not reach the first one's bundle.
  ok(await stepwise('init', 'billing-desk'));
}, 900_000);

afterAll(async () => {
  await stopLocalService(env.STEPWISE_LOCAL_SERVICE_DIR);
  rmSync(work, { recursive: true, force: true });
});

describe('a project made by stepwise new, with the packed package installed', () => {
  it('has the layout of this repository and names no path of it', () => {
    for (const path of [
      'package.json',
      'tsconfig.json',
      'cdk.json',
      'infra/app.ts',
      'stepwise.config.ts',
      'statemachines/support-desk/workflow.yaml',
      'lambdas/workflows/support-desk',
      'test',
      'README.md',
      '.gitignore',
    ])
      expect(existsSync(join(project, path)), path).toBe(true);
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) =>
        ['node_modules', '.stepwise', 'cdk.out'].includes(f)
          ? []
          : statSync(join(dir, f)).isDirectory()
            ? files(join(dir, f))
            : [join(dir, f)],
      );
    for (const file of files(project))
      expect(readFileSync(file, 'utf8'), relative(project, file)).not.toContain(PROJECT_ROOT);
    // A file: dependency is relative to the project, as npm writes them.
    expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).dependencies.stepwise).toBe(
      `file:../${basename(tarball)}`,
    );
  });

  it('imports only the entry points the package exports', () => {
    const pkg = JSON.parse(readFileSync(join(project, 'node_modules/stepwise/package.json'), 'utf8'));
    expect(Object.keys(pkg.exports)).toEqual([
      '.',
      './cdk',
      './config',
      './testing',
      './cli',
      './embeddings',
      './templates',
      './dynamodb',
      './package.json',
    ]);
    for (const [key, target] of Object.entries(pkg.exports as Record<string, string | Record<string, string>>))
      for (const file of typeof target === 'string' ? [target] : Object.values(target))
        expect(existsSync(join(project, 'node_modules/stepwise', file)), `${key}: ${file}`).toBe(true);
    // bin/link-self.mjs is not in the tarball: a prepare script running it would warn on every install.
    expect(pkg.scripts?.prepare).toBeUndefined();
    expect(existsSync(join(project, 'node_modules/stepwise/dist/index.d.ts'))).toBe(true);
    // The engine ships compiled: no TypeScript source but the templates, and no example.
    expect(existsSync(join(project, 'node_modules/stepwise/src/runtime'))).toBe(false);
    expect(existsSync(join(project, 'node_modules/stepwise/src/cli/templates/_project'))).toBe(true);
    expect(existsSync(join(project, 'node_modules/stepwise/lambdas'))).toBe(false);
  });

  it('resolves the entries a tool imports besides stepwise, as Node and a Lambda bundle do', async () => {
    const entries = ['stepwise/embeddings', 'stepwise/templates', 'stepwise/dynamodb'];
    const script = `for (const e of ${JSON.stringify(entries)}) console.log(e, Object.keys(await import(e)).length);`;
    const { out } = ok(await run(project, process.execPath, '--input-type=module', '-e', script));
    for (const entry of entries) expect(out).toMatch(new RegExp(`^${entry} [1-9]`, 'm'));
  });

  it('validates, runs its sample and passes its evals with the installed CLI', async () => {
    expect(ok(await stepwise('validate')).out).toContain('✓ support-desk');
    const ran = JSON.parse(
      ok(await stepwise('run', 'support-desk', '--input', 'statemachines/support-desk/samples', '--json')).out,
    );
    expect(ran.map((r: { status: string }) => r.status)).toEqual(['SUCCEEDED']);
    expect(JSON.parse(ok(await stepwise('eval', 'support-desk', '--json')).out)).toMatchObject({
      failed: 0,
      passed: 1,
    });
  });

  it('synthesizes a workflow from a cache between processes, and again as soon as a definition changes', async () => {
    const definition = async () => JSON.parse(ok(await stepwise('synth', 'support-desk')).out);
    const before = await definition();
    expect(existsSync(join(project, '.stepwise/cache/synth-dev.json'))).toBe(true);
    expect(await definition()).toEqual(before);
    const manifest = join(project, 'statemachines/support-desk/workflow.yaml');
    const text = readFileSync(manifest, 'utf8');
    writeFileSync(manifest, text.replace(/^maxSteps: \d+$/m, 'maxSteps: 7'));
    try {
      expect(JSON.stringify(await definition())).not.toEqual(JSON.stringify(before));
    } finally {
      writeFileSync(manifest, text);
    }
    expect(await definition()).toEqual(before);
  });

  it('passes its own npm test: every workflow’s evals through stepwise/testing', async () => {
    const test = ok(await run(project, 'npm', 'test'));
    expect(stripVTControlCharacters(test.out)).toMatch(/Tests\s+2 passed \(2\)/);
    process.stderr.write(
      `stepwise new → green npm test: ${((Date.now() - started.at) / 1000).toFixed(0)} s (npm install included)\n`,
    );
  });

  it.each([
    ['email', 'inbox', 'AWS::SES::ReceiptRule'],
    ['lifecycle', 'orders', 'AWS::Events::Rule'],
    ['order-support', 'orders', 'AWS::SES::ReceiptRule'],
  ])(
    'makes a %s project (%s) that validates, passes its own npm test and synthesizes',
    async (template, name, resource) => {
      const other = join(work, `${template}-project`);
      ok(await stepwise('new', other, '--template', template, '--stepwise', `file:${tarball}`));
      // The same dependencies as the first project: its node_modules serve this one too.
      symlinkSync(join(project, 'node_modules'), join(other, 'node_modules'));
      copyFileSync(join(project, 'package-lock.json'), join(other, 'package-lock.json'));
      const inOther = (...args: string[]) =>
        run(other, process.execPath, join(other, 'node_modules', '.bin', 'stepwise'), ...args);
      expect(ok(await inOther('validate')).out).toContain(`✓ ${name}`);
      expect(stripVTControlCharacters(ok(await run(other, 'npm', 'test')).out)).toMatch(/Tests\s+\d+ passed/);
      ok(await run(other, 'npx', 'cdk', 'synth', '-c', 'env=dev', '-q'));
      const stackName = `Stepwise-${name[0]!.toUpperCase()}${name.slice(1)}-dev`;
      const template_ = JSON.parse(readFileSync(join(other, 'cdk.out', `${stackName}.template.json`), 'utf8'));
      const types = Object.values(template_.Resources as Record<string, { Type: string }>).map((r) => r.Type);
      expect(types).toContain('AWS::StepFunctions::StateMachine');
      expect(types).toContain(resource);
    },
  );

  it('synthesizes with cdk synth -c env=dev, as the README says: a state machine per workflow, each bundle holding its own workflow only', async () => {
    ok(await run(project, 'npx', 'cdk', 'synth', '-c', 'env=dev', '-q'));
    const template = JSON.parse(readFileSync(join(project, 'cdk.out/Stepwise-SupportDesk-dev.template.json'), 'utf8'));
    const machines = Object.values(template.Resources as Record<string, { Type: string }>).filter(
      (r) => r.Type === 'AWS::StepFunctions::StateMachine',
    );
    expect(machines).toHaveLength(1);
    const steps = Object.values(
      template.Resources as Record<
        string,
        {
          Type: string;
          Metadata?: Record<string, string>;
          Properties: { Environment?: { Variables?: Record<string, string> } };
        }
      >,
    ).filter(
      (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.WORKFLOW === 'support-desk',
    );
    expect(steps.length).toBe(4);
    const assets = readdirSync(join(project, 'cdk.out')).filter(
      (d) => d.startsWith('asset.') && existsSync(join(project, 'cdk.out', d, 'index.mjs')),
    );
    const supportDesk = assets.filter((d) => existsSync(join(project, 'cdk.out', d, 'statemachines/support-desk')));
    expect(supportDesk.length).toBeGreaterThan(0);
    for (const asset of supportDesk) {
      const dir = join(project, 'cdk.out', asset);
      const bundle = readFileSync(join(dir, 'index.mjs'), 'utf8');
      expect(bundle).toContain('lookup_account');
      // No other workflow's code or definitions, no evals or samples.
      expect(bundle).not.toContain('billing-desk');
      expect(bundle).not.toContain('billing_001');
      expect(readdirSync(join(dir, 'statemachines'))).toEqual(['support-desk']);
      expect(readdirSync(join(dir, 'statemachines/support-desk')).sort()).toEqual([
        'offline-model.yaml',
        'steps',
        'workflow.yaml',
      ]);
    }
  });
});
