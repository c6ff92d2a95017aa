/**
 * A local command loads the CDK only when it has to synthesize: `validate`, and a second `run` or lifecycle replay of
 * an unchanged project (its synth kept between processes), start without aws-cdk-lib, which alone cost about a
 * second of every command. Each CLI here runs from the built package with a preload that records, at exit, how many
 * aws-cdk-lib modules the process loaded.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixtureProject } from '../support/fixture-project.ts';
import { type Ran, run } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-startup-');
let dir: string;

const PRELOAD = `process.on('exit', () => require('node:fs').appendFileSync(process.env.CDK_LOADS_FILE,
  JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('/aws-cdk-lib/')).length) + '\\n'));`;

/** Run `node args` in the copy; the number of aws-cdk-lib modules it loaded, and what it printed. */
async function cdkModulesOf(...args: string[]): Promise<{ cdk: number; ran: Ran }> {
  const loads = join(dir, `cdk-loads-${Date.now()}.txt`);
  process.env.CDK_LOADS_FILE = loads;
  process.env.NODE_OPTIONS = `--require ${join(dir, 'count-cdk.cjs')}`;
  try {
    const ran = await run(dir, process.execPath, ...args);
    expect(ran.code, `${args.join(' ')}\n${ran.err}`).toBe(0);
    return { cdk: Number(readFileSync(loads, 'utf8').trim()), ran };
  } finally {
    delete process.env.NODE_OPTIONS;
    delete process.env.CDK_LOADS_FILE;
  }
}
const stepwise = (...args: string[]) => cdkModulesOf('bin/stepwise.mjs', ...args);

beforeAll(() => {
  dir = copyFixtureProject(tempDir(), { built: true });
  writeFileSync(join(dir, 'count-cdk.cjs'), PRELOAD);
});

describe('a local command of the installed package', () => {
  it('counts the CDK modules a process loads (the probe can fail)', async () => {
    expect((await cdkModulesOf('-e', "new (require('aws-cdk-lib').App)()")).cdk).toBeGreaterThan(10);
  });

  it('validates a workflow without loading the CDK', async () => {
    expect((await stepwise('validate', 'consensus-pick')).cdk).toBe(0);
  });

  it('runs a sample of an unchanged project again without loading the CDK', async () => {
    const sample = ['run', 'consensus-pick', '--input', 'statemachines/consensus-pick/samples/vote.json', '--json'];
    const first = await stepwise(...sample);
    const second = await stepwise(...sample);
    expect(second.cdk).toBe(0);
    expect(JSON.parse(second.ran.out)).toMatchObject([{ status: 'SUCCEEDED' }]);
    expect(JSON.parse(first.ran.out)).toMatchObject([{ status: 'SUCCEEDED' }]);
  });

  it("replays a lifecycle again, and runs the project's own lifecycle command, without loading the CDK", async () => {
    const sample = 'statemachines/member-journey/samples/crm-placement.jsonl';
    const replay = ['lifecycle', 'member-journey', 'replay', sample, '--in-memory', '--json'];
    const first = await stepwise(...replay);
    const second = await stepwise(...replay);
    expect(second.cdk).toBe(0);
    expect(JSON.parse(second.ran.out)).toEqual(JSON.parse(first.ran.out));
    const report = await stepwise('member', 'report', '--from', sample, '--in-memory', '--json');
    expect(report.cdk).toBe(0);
    expect(() => JSON.parse(report.ran.out)).not.toThrow();
  });
});
