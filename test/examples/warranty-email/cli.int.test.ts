/**
 * The CLI contract of `stepwise run`, `stepwise eval` and `stepwise demo`, run in-process through
 * commander (each command starts its own local session): the JSON shapes other tooling reads,
 * clean stdout, exit codes, and one-line errors. `--model bedrock` without credentials runs as a
 * real process with an empty credential chain.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as demo from '../../../src/cli/commands/demo.ts';
import * as evalCommand from '../../../src/cli/commands/eval.ts';
import * as run from '../../../src/cli/commands/run.ts';
import { PROJECT_ROOT, STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { expectOneLine, runCli, useCliCapture } from '../../support/cli.ts';
import { useTempDirs } from '../../support/tmp.ts';
import { SAMPLES_DIR, WRONG_CASE_YAML } from './support.ts';

const io = useCliCapture();
/** Run `stepwise <args>`; returns the exit code (`process.exitCode` when the action returned). */
const cli = (...args: string[]) => runCli([run, evalCommand, demo], ...args);
const tmp = useTempDirs('stepwise-e2e-cli-');

describe('stepwise run', () => {
  /** The results of the --json run, for the shape checks. */
  let runJson: Record<string, unknown>[] = [];

  it('--json prints exactly one array, an entry per email in input order, in the contract shape', async () => {
    const code = await cli(
      'run',
      'warranty-email',
      '--email',
      SAMPLES_DIR,
      '--email',
      join(SAMPLES_DIR, 'out-of-scope.eml'),
      '--json',
    );

    expect(code).toBe(0); // REJECTED is a normal outcome
    const results = (runJson = JSON.parse(io.out) as Record<string, unknown>[]);
    expect(results.map((r) => [String(r.file).slice(SAMPLES_DIR.length + 1) || r.file, r.status])).toEqual([
      ['auto-reply.eml', 'REJECTED'],
      ['expired-warranty.eml', 'SUCCEEDED'],
      ['missing-serial.eml', 'SUCCEEDED'],
      ['out-of-scope.eml', 'SUCCEEDED'],
      ['spam.eml', 'REJECTED'],
      ['unknown-serial.eml', 'SUCCEEDED'],
      ['valid-warranty.eml', 'SUCCEEDED'],
      ['out-of-scope.eml', 'DUPLICATE'],
    ]);
    expect(results[6]).toMatchObject({
      messageId: '<CAF7x2q1.valid-warranty.48213@mail.example.org>',
      executionName: expect.stringMatching(/^email-[a-z0-9]{40}$/),
      steps: [
        // Step 01's fast path routes the clear claim: `code`, no model call.
        {
          name: '01-extract-serial',
          next: '02-check-warranty',
          decidedBy: 'code',
          fields: { serialNumber: 'SN48213' },
        },
        { name: '02-check-warranty', next: '03a-valid-warranty', decidedBy: 'code' },
        { name: '03a-valid-warranty', next: '05-send-confirmation', decidedBy: 'offline' },
        { name: '05-send-confirmation', next: 'DONE', decidedBy: 'offline', fields: {} },
      ],
      outbox: [{ to: 'maria.lopez@example.org', subject: 'Re: Headphones stopped charging - warranty claim' }],
      usage: { modelCalls: 2 },
    });
    expect(results[0]).toMatchObject({ reason: 'auto_submitted: Auto-Submitted: auto-replied', steps: [], outbox: [] });
    expect(results[7]).toMatchObject({ executionName: results[3]!.executionName, steps: [], outbox: [] });
    // Progress went to stderr.
    expect(io.err).toContain('[8/8] out-of-scope.eml DUPLICATE');
  });

  // ENGINE BUG?: an email that ran is reported as { messageId, file, ... } (workflow-session.ts deliverEmail spreads
  // report() after messageId), a refused one as { file, messageId, ... }: the --json key order is no longer one
  // contract.
  it('--json gives every entry the contract key order', () => {
    const results = runJson;
    expect(results).toHaveLength(8);
    for (const r of results) {
      const ran = r.status === 'SUCCEEDED' || r.status === 'FAILED';
      expect(Object.keys(r)).toEqual([
        'file',
        'messageId',
        'executionName',
        'status',
        ...(r.reason === undefined ? [] : ['reason']),
        'steps',
        'toolCalls',
        'outbox',
        ...(ran ? ['usage'] : []),
        ...(r.output === undefined ? [] : ['output']),
      ]);
      if (ran)
        expect(Object.keys(r.usage as object)).toEqual([
          'modelCalls',
          'inputTokens',
          'outputTokens',
          'cacheReadInputTokens',
          'cacheWriteInputTokens',
        ]);
      for (const s of r.steps as Record<string, unknown>[])
        expect(Object.keys(s)).toEqual(['name', 'next', 'decidedBy', 'fields', 'usage']);
      for (const c of r.toolCalls as Record<string, unknown>[])
        expect(Object.keys(c)).toEqual(['step', 'tool', 'args', 'result']);
      for (const m of r.outbox as Record<string, unknown>[]) expect(Object.keys(m)).toEqual(['to', 'subject', 'body']);
    }
  });

  it('refuses a missing input path with one line before starting anything', async () => {
    const missing = join(tmp(), 'missing.eml');
    expect(await cli('run', 'warranty-email', '--email', SAMPLES_DIR, '--email', missing, '--json')).toBe(1);
    expect(io.err.split('\n').at(-2)).toBe(`stepwise: input not found: ${missing}`);
    expect(io.out).not.toContain('"status"');
    expect(io.err).not.toContain('[1/');
  });

  it('refuses bad arguments with one line before starting anything', async () => {
    expect(await cli('run', 'warranty-email')).toBe(1);
    expectOneLine(io.err);
    expect(io.err).toBe('stepwise: give at least one --email FILE_OR_DIR\n');
    io.err = '';
    expect(await cli('run', 'no-such-workflow', '--email', SAMPLES_DIR)).toBe(1);
    expectOneLine(io.err);
    io.err = '';
    // The registry flag became the generic --local-env NAME=VALUE.
    await expect(
      cli('run', 'warranty-email', '--email', SAMPLES_DIR, '--registry', join(tmp(), 'none.json')),
    ).rejects.toThrow(/unknown option '--registry'/);
    io.err = '';
    await expect(
      cli('run', 'warranty-email', '--email', SAMPLES_DIR, '--local-env', 'registry=none.json'),
    ).rejects.toThrow(/expected NAME=VALUE/);
    expect(io.out).toBe('');
  });
});

describe('stepwise demo', () => {
  it('processes every sample in a fresh session and prints one line per input and where the histories are', async () => {
    expect(await cli('demo', 'warranty-email')).toBe(0);
    expect(io.out).toMatch(
      /^Stepwise demo: the sample inputs of 1 workflow: warranty-email \(7 input files\), .*offline stand-in \(deterministic rules, NOT an LLM\)\.\n/,
    );
    // The trail ends with the model calls of the execution.
    expect(io.out).toMatch(
      /^ {2}valid-warranty\.eml +SUCCEEDED +01-extract-serial → 02-check-warranty → 03a-valid-warranty → 05-send-confirmation {2}\[2 model calls\]$/m,
    );
    expect(io.out).toMatch(
      /^ {2}expired-warranty\.eml +SUCCEEDED +01-extract-serial → 02-check-warranty → 03c-expired-warranty {2}\[1 model call\]$/m,
    );
    expect(io.out).toMatch(
      /^ {2}unknown-serial\.eml +SUCCEEDED +01-extract-serial → 02-check-warranty → 03b-device-not-found {2}\[1 model call\]$/m,
    );
    // A short claim with no serial: step 01's fast path, then 03d's reply.
    expect(io.out).toMatch(
      /^ {2}missing-serial\.eml +SUCCEEDED +01-extract-serial → 03d-request-serial {2}\[1 model call\]$/m,
    );
    expect(io.out).toMatch(
      /^ {2}out-of-scope\.eml +SUCCEEDED +01-extract-serial → 04-out-of-scope {2}\[1 model call\]$/m,
    );
    expect(io.out).toMatch(/^ {2}spam\.eml +REJECTED +spam: spamVerdict: FAIL$/m);
    expect(io.out).toMatch(/^ {2}auto-reply\.eml +REJECTED +auto_submitted: /m);
    // Concise: no reply bodies (stepwise run prints those).
    expect(io.out).not.toMatch(/reply to|│/);
    expect(io.out).toMatch(/^Done in \d+\.\d s: 7 inputs\.$/m);
    expect(io.out).toMatch(
      /^Step trails are kept in \.stepwise\/executions\/; show one with: npx stepwise history email-[a-z0-9]{40}$/m,
    );
  });
});

describe('stepwise eval', () => {
  const casesDir = () => {
    const dir = tmp();
    copyFileSync(
      join(STATEMACHINES_DIR, 'warranty-email', 'evals', 'valid_warranty_001.yaml'),
      join(dir, 'valid_warranty_001.yaml'),
    );
    writeFileSync(join(dir, 'wrong.yaml'), WRONG_CASE_YAML);
    return dir;
  };

  it('--json prints integer counts and per-case results, and exits 1 when a case fails', async () => {
    const code = await cli('eval', 'warranty-email', '--cases', casesDir(), '--json');
    expect(code).toBe(1);
    const report = JSON.parse(io.out);
    expect(report).toMatchObject({ passed: 1, failed: 1, total: 2 });
    expect([report.passed, report.failed, report.total].every(Number.isInteger)).toBe(true);
    expect(report.cases.map((c: Record<string, unknown>) => [c.id, c.passed, Object.keys(c)])).toEqual([
      ['valid_warranty_001', true, ['id', 'passed', 'durationMs', 'failures', 'steps', 'execution']],
      ['deliberately_wrong_001', false, ['id', 'passed', 'durationMs', 'failures', 'steps', 'execution']],
    ]);
    expect(io.err).toMatch(/\[1\/2\] valid_warranty_001 ✓\n\[2\/2\] deliberately_wrong_001 ✗\n/);
  });

  it('prints each case, the failing step with what was expected and what happened, what ran, and a summary', async () => {
    expect(await cli('eval', 'warranty-email', '--cases', casesDir())).toBe(1);
    const lines = io.out.split('\n');
    expect(lines[0]).toMatch(
      /^✓ valid_warranty_001 +01-extract-serial → 02-check-warranty → 03a-valid-warranty → 05-send-confirmation {2}\[2 model calls\]$/,
    );
    expect(lines[1]).toMatch(/^✗ deliberately_wrong_001 +01-extract-serial → 03d-request-serial {2}\[1 model call\]$/);
    expect(lines[2]).toMatch(
      /^ {4}step 2 \(02-check-warranty\): wrong step: 01-extract-serial routed to 03d-request-serial \(reason: .+\)$/,
    );
    expect(lines[3]).toBe('      expected: 02-check-warranty');
    expect(lines[4]).toBe('      actual:   03d-request-serial');
    // What ran, kept under the run's and the case's name.
    expect(lines[5]).toMatch(/^ {4}execution: (eval-[\dT.Z-]+-deliberately_wrong_001) {2}\(stepwise history \1\)$/);
    expect(lines[6]).toBe('1 passed, 1 failed, 2 total; model: offline stand-in (deterministic rules, NOT an LLM)');
  });

  it('refuses a folder without cases with one line', async () => {
    expect(await cli('eval', 'warranty-email', '--cases', tmp())).toBe(1);
    expect(io.err.split('\n').at(-2)).toMatch(/^stepwise: no eval cases \(\*\.yaml\) in /);
  });

  it('--model bedrock without AWS credentials fails with one line, not a stack trace', () => {
    const home = tmp();
    const p = spawnSync(process.execPath, ['bin/stepwise.mjs', 'eval', 'warranty-email', '--model', 'bedrock'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      // An empty credential chain: no variables, no config files, no instance metadata.
      env: {
        PATH: process.env.PATH,
        HOME: home,
        AWS_REGION: 'us-east-1',
        AWS_CONFIG_FILE: join(home, 'none'),
        AWS_SHARED_CREDENTIALS_FILE: join(home, 'none'),
        AWS_EC2_METADATA_DISABLED: 'true',
      },
    });
    expect(p.status).toBe(1);
    expect(p.stdout).toBe('');
    expect(p.stderr.trimEnd().split('\n').at(-1)).toMatch(
      /^stepwise: --model bedrock needs AWS credentials \(set AWS_PROFILE, or AWS_ACCESS_KEY_ID/,
    );
    expect(p.stderr).not.toMatch(/^\s+at /m);
  });
});
