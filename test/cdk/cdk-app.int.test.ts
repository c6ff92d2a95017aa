/**
 * A project's CDK app entry point (`StepwiseApp.main`, the fixture project's infra/app.ts) as `cdk synth` runs it (a
 * child process in a copy of the project; the CLI passes `-c` context through CDK_CONTEXT_JSON), with cdk-nag
 * registered: an unacknowledged finding fails the synth. Bundling is skipped here; `npx cdk synth -c env=NAME` bundles
 * with the local esbuild.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyFixtureProject } from '../support/fixture-project.ts';
import { copyEnv } from '../support/project-copy.ts';

const project = copyFixtureProject(mkdtempSync(join(tmpdir(), 'stepwise-cdk-app-')));
const outdirs: string[] = [project];
afterAll(() => outdirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function synth(context: Record<string, unknown>) {
  const outdir = mkdtempSync(join(tmpdir(), 'stepwise-cdk-out-'));
  outdirs.push(outdir);
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'infra/app.ts'], {
    cwd: project,
    encoding: 'utf8',
    env: {
      ...copyEnv(),
      CDK_OUTDIR: outdir,
      CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [], ...context }),
    },
  });
  return { ...child, outdir };
}

describe("a project's infra/app.ts", () => {
  it('synthesizes the environment named by -c env, cdk-nag clean, with no AWS credentials', () => {
    const { status, stderr, outdir } = synth({ env: 'dev' });
    expect(stderr).not.toMatch(/AwsSolutions/);
    expect(status).toBe(0);
    const template = JSON.parse(readFileSync(join(outdir, 'Stepwise-CaseDesk-dev.template.json'), 'utf8'));
    // The step workflow and (manifest singlePrompt) the single-prompt agent beside it.
    expect(
      Object.values(template.Resources)
        .filter((r: any) => r.Type === 'AWS::StepFunctions::StateMachine')
        .map((r: any) => r.Metadata?.['stepwise:workflow'] ?? null),
    ).toEqual(['case-desk', null]);
    expect(existsSync(join(outdir, 'Stepwise-CaseDesk-prod.template.json'))).toBe(false);
  });

  it('refuses prod while it has placeholder values: one line naming the field, no stack trace', () => {
    const { status, stderr, outdir } = synth({ env: 'prod' });
    expect(status).toBe(1);
    expect(stderr.trim()).toBe(
      'stepwise: environment "prod": alarms.email: "desk-alerts@example.com" is a placeholder: set the real value in stepwise.config.ts',
    );
    expect(existsSync(join(outdir, 'Stepwise-CaseDesk-prod.template.json'))).toBe(false);
  });

  it('fails in one line with the known environment names for an unknown one', () => {
    const { status, stderr } = synth({ env: 'qa' });
    expect(status).toBe(1);
    expect(stderr.trim()).toBe(
      'stepwise: unknown environment "qa" (stepwise.config.ts defines: dev, staging, prod); select one with -c env=NAME',
    );
  });
});
