/**
 * The warm local service through the real CLI: two commands at once share one emulator without mixing their
 * executions, a command that finds the service dead starts a new one, and `stepwise local stop` ends it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, readServiceInfo, stopLocalService } from '../../../src/local/cloud/local-service.ts';
import { copyFixtureProject } from '../../support/fixture-project.ts';
import { copyEnv } from '../../support/project-copy.ts';
import { useTempDirs } from '../../support/tmp.ts';

const tempDir = useTempDirs('stepwise-local-service-');
let project: string;
let serviceDir: string;

/** The CLI in the copy, on the service of `serviceDir` (not the suite's shared emulator). */
function stepwise(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = { ...copyEnv(), STEPWISE_LOCAL_SERVICE_DIR: serviceDir };
  delete env.STEPWISE_DYNAMODB_ENDPOINT;
  delete env.STEPWISE_LOCAL_SERVICE;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/stepwise.mjs', ...args], { cwd: project, env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

interface RunJson {
  file: string;
  executionName: string;
  status: string;
}

const runSample = async (workflow: string, sample: string): Promise<RunJson> => {
  const ran = await stepwise('run', workflow, '--input', `statemachines/${workflow}/samples/${sample}`, '--json');
  expect(ran.code, ran.err).toBe(0);
  const [result] = JSON.parse(ran.out) as RunJson[];
  return result!;
};

const historyInput = (name: string): unknown =>
  (JSON.parse(readFileSync(join(project, '.stepwise', 'executions', `${name}.json`), 'utf8')) as { input: unknown })
    .input;

beforeAll(() => {
  // The CLI as installed (compiled): the service and its commands start without tsx.
  project = copyFixtureProject(tempDir(), { built: true });
  serviceDir = tempDir();
});
afterAll(async () => {
  await stopLocalService(serviceDir);
});

describe('the warm local service', () => {
  it('serves two commands at once from one emulator, each with its own execution and input', {
    timeout: 300_000,
  }, async () => {
    const [picked, review] = await Promise.all([
      runSample('consensus-pick', 'vote.json'),
      runSample('checkpoint-review', 'checkpoint.json'),
    ]);
    expect([picked.status, review.status]).toEqual(['SUCCEEDED', 'PAUSED']);
    expect(picked.executionName).not.toBe(review.executionName);
    const sample = (workflow: string, file: string) =>
      JSON.parse(readFileSync(join(project, 'statemachines', workflow, 'samples', file), 'utf8'));
    expect(historyInput(picked.executionName)).toMatchObject(sample('consensus-pick', 'vote.json'));
    expect(historyInput(review.executionName)).toMatchObject(sample('checkpoint-review', 'checkpoint.json'));

    const info = readServiceInfo(serviceDir)!;
    expect(isAlive(info.pid)).toBe(true);
    const status = await stepwise('local', 'status', '--json');
    expect(JSON.parse(status.out)).toMatchObject({ running: true, pid: info.pid, leases: 0 });
  });

  it('starts a new service when the one on record is dead', { timeout: 300_000 }, async () => {
    const before = readServiceInfo(serviceDir)!;
    process.kill(before.pid, 'SIGKILL');
    while (isAlive(before.pid)) await new Promise((r) => setTimeout(r, 20));

    const result = await runSample('consensus-pick', 'vote.json');
    expect(result.status).toBe('SUCCEEDED');
    const after = readServiceInfo(serviceDir)!;
    expect(after.pid).not.toBe(before.pid);
    expect(isAlive(after.pid)).toBe(true);
  });

  it('stops on `stepwise local stop` and says so', { timeout: 120_000 }, async () => {
    const { pid } = readServiceInfo(serviceDir)!;
    const stopped = await stepwise('local', 'stop');
    expect(stopped.out).toBe('local service: stopped\n');
    expect(isAlive(pid)).toBe(false);
    const status = await stepwise('local', 'status', '--json');
    expect(JSON.parse(status.out)).toMatchObject({ running: false });
  });
});
