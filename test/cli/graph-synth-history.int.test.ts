/**
 * The graph / synth / history commands, run in-process through commander: output on stdout,
 * one-line errors on stderr and exit code 1 on bad input.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as graph from '../../src/cli/commands/graph.ts';
import * as history from '../../src/cli/commands/history.ts';
import * as synth from '../../src/cli/commands/synth.ts';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import { workflowToMermaid } from '../../src/definitions/workflow/mermaid.ts';
import { summarizeExecution, writeLocalExecution } from '../../src/local/records/history.ts';
import { expectOneLine, runCli, useCliCapture } from '../support/cli.ts';
import { useTempDirs } from '../support/tmp.ts';

const io = useCliCapture();
/**
 * Run `stepwise <args>`; returns the exit code (0 when the action returned: these commands never set
 * `process.exitCode`).
 */
const cli = (...args: string[]) => runCli([graph, synth, history], ...args);
const tmp = useTempDirs('stepwise-cli-');

describe('stepwise graph', () => {
  it('prints the Mermaid diagram of a workflow by name, or by folder path as JSON', async () => {
    expect(await cli('graph', 'case-desk')).toBe(0);
    expect(io.out).toBe(workflowToMermaid(loadWorkflow('case-desk')));
    io.out = '';
    expect(await cli('graph', join(PACKAGE_ROOT, 'test/fixtures/workflows/triage'), '--json')).toBe(0);
    expect(JSON.parse(io.out)).toEqual({
      workflow: 'triage',
      mermaid: workflowToMermaid(loadWorkflow('triage', join(PACKAGE_ROOT, 'test/fixtures/workflows'))),
    });
  });

  it('fails with one line for an unknown workflow, a missing folder and an invalid definition', async () => {
    expect(await cli('graph', 'no-such-workflow')).toBe(1);
    expectOneLine(io.err);
    expect(io.err).toContain('unknown workflow "no-such-workflow" (known: ');

    io.err = '';
    expect(await cli('graph', join(tmp(), 'missing'))).toBe(1);
    expectOneLine(io.err);
    expect(io.err).toContain('workflow manifest not found');

    const bad = join(tmp(), 'bad');
    mkdirSync(join(bad, 'steps'), { recursive: true });
    writeFileSync(
      join(bad, 'workflow.yaml'),
      'name: bad\ndescription: x\nversion: 1\nentry: a\nfallback: a\nmodel: {}\n',
    );
    io.err = '';
    expect(await cli('graph', bad)).toBe(1);
    expectOneLine(io.err);
    expect(io.err).toMatch(/workflow\.yaml: (version|model\.id)/);
  });
});

describe('stepwise synth', () => {
  it('prints the deployed ASL of a workflow, with a note on stderr that tokens are placeholders', async () => {
    expect(await cli('synth', 'case-desk')).toBe(0);
    const asl = JSON.parse(io.out);
    expect(asl.StartAt).toBe('Start');
    expect(asl.States['01-read-request'].Resource).toMatch(/^arn:aws:lambda:us-east-1:123456789012:function:/);
    expect(io.err).toContain('tokens resolved to local placeholders');
  });

  it('fails with one line for an unknown workflow or environment', async () => {
    expect(await cli('synth', 'nope')).toBe(1);
    expectOneLine(io.err);
    expect(io.err).toMatch(/\(known: .*case-desk/);
    io.err = '';
    expect(await cli('synth', '--env', 'qa')).toBe(1);
    expectOneLine(io.err);
    expect(io.err).toContain('unknown environment "qa"');
  });

  it('refuses an environment outside dev that still has a placeholder, as cdk synth does', async () => {
    expect(await cli('synth', 'case-desk', '--env', 'staging')).toBe(1);
    expectOneLine(io.err);
    expect(io.err).toMatch(/^stepwise: environment "staging": [\w.]+: "[^"]*example\.com[^"]*" is a placeholder: /);
    expect(io.out).toBe('');
  });
});

describe('stepwise history', () => {
  const arn = 'arn:aws:states:us-east-1:123456789012:execution:Wf:exec-1';
  const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s));
  const lambdaRun = (id: number, step: string, output: object) => [
    { id, type: 'TaskStateEntered', timestamp: at(id), stateEnteredEventDetails: { name: step, input: '{}' } },
    {
      id: id + 1,
      type: 'LambdaFunctionScheduled',
      timestamp: at(id),
      lambdaFunctionScheduledEventDetails: { resource: 'x', input: JSON.stringify({ workflow: 'wf', step }) },
    },
    {
      id: id + 2,
      type: 'LambdaFunctionSucceeded',
      timestamp: at(id),
      lambdaFunctionSucceededEventDetails: { output: JSON.stringify(output) },
    },
    { id: id + 3, type: 'TaskStateExited', timestamp: at(id), stateExitedEventDetails: { name: step, output: '{}' } },
  ];
  const events = [
    { id: 1, type: 'ExecutionStarted', timestamp: at(0), executionStartedEventDetails: { input: '{}' } },
    ...lambdaRun(2, 'a-intake', { next: 'b-lookup', reason: 'names a record' }),
    { id: 6, type: 'TaskStateEntered', timestamp: at(6), stateEnteredEventDetails: { name: 'b-lookup', input: '{}' } },
    {
      id: 7,
      type: 'LambdaFunctionScheduled',
      timestamp: at(6),
      lambdaFunctionScheduledEventDetails: { resource: 'x', input: '{}' },
    },
    {
      id: 8,
      type: 'LambdaFunctionFailed',
      timestamp: at(7),
      lambdaFunctionFailedEventDetails: {
        error: 'ToolInputError',
        cause: '{"errorType":"ToolInputError","errorMessage":"bad id"}',
      },
    },
    { id: 9, type: 'TaskStateExited', timestamp: at(7), stateExitedEventDetails: { name: 'b-lookup', output: '{}' } },
    ...lambdaRun(10, 'z-fallback', { next: 'DONE', reason: 'handed off' }),
    { id: 14, type: 'ExecutionSucceeded', timestamp: at(14), executionSucceededEventDetails: { output: '{}' } },
  ] as never;

  it('prints the step trail of a local execution, by name or ARN, readably or as JSON', async () => {
    const dir = tmp();
    writeLocalExecution(summarizeExecution(arn, events), dir);
    expect(await cli('history', 'exec-1', '--dir', dir)).toBe(0);
    expect(io.out).toBe(
      [
        'exec-1 (wf) SUCCEEDED in 14.0 s: 3 steps, 3 state transitions',
        `  ${arn}`,
        '1. a-intake → b-lookup (names a record)',
        '2. b-lookup ✗ ToolInputError: bad id',
        '3. z-fallback → DONE (handed off)',
        '',
      ].join('\n'),
    );
    io.out = '';
    expect(await cli('history', arn, '--dir', dir, '--json')).toBe(0);
    const json = JSON.parse(io.out);
    expect(json.trail.map((s: { name: string }) => s.name)).toEqual(['a-intake', 'b-lookup', 'z-fallback']);
    expect(json).toMatchObject({ name: 'exec-1', status: 'SUCCEEDED', stateTransitions: 3 });
  });

  it('fails with one line for a missing execution', async () => {
    expect(await cli('history', 'nope', '--dir', tmp())).toBe(1);
    expectOneLine(io.err);
    expect(io.err).toContain('ExecutionDoesNotExist: no local execution "nope"');
  });

  it('with --aws, needs an execution ARN and fails clearly without credentials', async () => {
    expect(await cli('history', 'exec-1', '--aws')).toBe(1);
    expectOneLine(io.err);
    expect(io.err).toContain('--aws needs an execution ARN');

    const saved = { ...process.env };
    try {
      for (const k of Object.keys(process.env))
        if (k.startsWith('AWS_') && k !== 'AWS_REGION' && k !== 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED')
          delete process.env[k];
      Object.assign(process.env, {
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_CONFIG_FILE: join(tmp(), 'none'),
        AWS_SHARED_CREDENTIALS_FILE: join(tmp(), 'none'),
      });
      io.err = '';
      expect(await cli('history', arn, '--aws')).toBe(1);
      expectOneLine(io.err);
      expect(io.err).toContain('no AWS credentials for --aws');
    } finally {
      process.env = saved;
    }
  });
});
