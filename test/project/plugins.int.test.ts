/**
 * A workflow is a plugin: adding one is adding its own folders, and every command and the CDK app
 * pick it up with no engine edit. Each test works on a throwaway copy of the fixture project and runs
 * the real CLI and `cdk synth` there, as a user would.
 */
import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { copyFixtureProject } from '../support/fixture-project.ts';
import { cdkSynthStack, snapshotFiles, stepwise } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-plugin-');
const json = (text: string) => JSON.parse(text) as any;

const stateMachineOf = (template: any, workflow: string) =>
  Object.values(template.Resources).find(
    (r: any) => r.Type === 'AWS::StepFunctions::StateMachine' && r.Metadata?.['stepwise:workflow'] === workflow,
  );

describe('stepwise init', () => {
  let dir: string;
  let before: Map<string, string>;
  beforeAll(() => {
    dir = copyFixtureProject(tempDir(), { built: true });
    before = snapshotFiles(dir);
  });

  it('scaffolds a workflow that validates, graphs, synthesizes, runs, evaluates and deploys at once, touching no other file', {
    timeout: 240_000,
  }, async () => {
    const init = await stepwise(dir, 'init', 'support-desk');
    expect(init.code, init.err).toBe(0);
    const after = snapshotFiles(dir);
    const added = [...after.keys()].filter((f) => !before.has(f));
    expect(
      added.every(
        (f) => f.startsWith('statemachines/support-desk/') || f.startsWith('lambdas/workflows/support-desk/'),
      ),
    ).toBe(true);
    expect([...before].filter(([f, text]) => after.get(f) !== text)).toEqual([]);

    const validate = await stepwise(dir, 'validate', 'support-desk');
    expect(validate.code, validate.err).toBe(0);
    expect(validate.out).toMatch(/✓ support-desk: 4 steps, 1 tools, \d+ offline rules, 1 eval cases/);

    const graph = await stepwise(dir, 'graph', 'support-desk');
    expect(graph.code, graph.err).toBe(0);
    expect(graph.out).toContain('s_02_look_up --> s_03_answer');

    const synth = await stepwise(dir, 'synth', 'support-desk');
    expect(synth.code, synth.err).toBe(0);
    expect(Object.keys(json(synth.out).States)).toEqual(
      expect.arrayContaining(['01-understand', '02-look-up', '03-answer', '04-hand-off']),
    );

    const ran = await stepwise(dir, 'run', 'support-desk', '--input', 'statemachines/support-desk/samples', '--json');
    expect(ran.code, ran.err).toBe(0);
    const [result] = json(ran.out);
    expect(result).toMatchObject({ status: 'SUCCEEDED', usage: { modelCalls: 2 } });
    expect(result.steps.map((s: any) => s.name)).toEqual(['01-understand', '02-look-up', '03-answer']);
    expect(result.output.result.fields.answer).toContain('Pro plan');

    const evaluated = await stepwise(dir, 'eval', 'support-desk', '--json');
    expect(evaluated.code, evaluated.err).toBe(0);
    expect(json(evaluated.out)).toMatchObject({ passed: 1, failed: 0, total: 1 });

    const template = await cdkSynthStack(dir, 'Stepwise-SupportDesk-dev');
    expect(stateMachineOf(template, 'support-desk')).toBeDefined();
  });

  it('refuses a name that exists or is not a workflow name, in one line', async () => {
    for (const name of ['case-desk', 'Bad_Name']) {
      const init = await stepwise(dir, 'init', name);
      expect(init.code).toBe(1);
      expect(init.err).toMatch(/^stepwise: [^\n]+\n$/);
    }
  });
});

describe('a workflow plugin with a non-email input, an EventBridge trigger and a tool without AWS resources', () => {
  let dir: string;
  beforeAll(() => {
    dir = copyFixtureProject(tempDir(), { built: true });
    cpSync(join(PACKAGE_ROOT, 'test/fixtures/plugins/order-check'), dir, {
      recursive: true,
      filter: (src) => !src.endsWith('README.md'),
    });
  });

  it('runs end to end through the synthesized ASL, with bound tool arguments from the input', {
    timeout: 120_000,
  }, async () => {
    const ran = await stepwise(
      dir,
      'run',
      'order-check',
      '--input',
      'statemachines/order-check/samples/small-order.json',
      '--json',
    );
    expect(ran.code, ran.err).toBe(0);
    const [result] = json(ran.out);
    // Two edges: the model routes after reading the score (two calls); the bound arguments come from the input.
    expect(result).toMatchObject({ status: 'SUCCEEDED', usage: { modelCalls: 2 } });
    expect(result.steps.map((s: any) => [s.name, s.next])).toEqual([
      ['01-assess', '02-approve'],
      ['02-approve', 'DONE'],
    ]);
    expect(result.toolCalls).toEqual([
      {
        step: '01-assess',
        tool: 'score_order',
        args: { orderId: 'O-1001', amount: 40 },
        result: { orderId: 'O-1001', risk: 4 },
      },
    ]);
  });

  it('refuses an input that does not match the manifest schema before anything runs', {
    timeout: 120_000,
  }, async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ orderId: 'nope', amount: 3 }));
    const ran = await stepwise(dir, 'run', 'order-check', '--input', bad, '--json');
    // Refused input is a failure of the command; its JSON is printed all the same.
    expect(ran.code).toBe(1);
    expect(json(ran.out)[0]).toMatchObject({ status: 'REJECTED', executionName: null });
    expect(json(ran.out)[0].reason).toMatch(/^input does not match the workflow's input schema: orderId: /);
  });

  it('passes its evals and deploys with its EventBridge rule and nothing granted for the tool', {
    timeout: 240_000,
  }, async () => {
    const evaluated = await stepwise(dir, 'eval', 'order-check', '--json');
    expect(evaluated.code, evaluated.err).toBe(0);
    expect(json(evaluated.out)).toMatchObject({ passed: 2, failed: 0, total: 2 });

    const template = await cdkSynthStack(dir, 'Stepwise-OrderCheck-dev');
    expect(stateMachineOf(template, 'order-check')).toBeDefined();
    const rules = Object.values(template.Resources).filter((r: any) => r.Type === 'AWS::Events::Rule') as any[];
    expect(rules).toHaveLength(1);
    expect(rules[0].Properties.EventPattern).toEqual({ source: ['shop.orders'], 'detail-type': ['OrderPlaced'] });
    expect(rules[0].Properties.Targets[0].InputPath).toBe('$.detail');
    // No tool declares a table: the stack has only the event log.
    const tables = Object.entries(template.Resources)
      .filter(([, r]: any) => r.Type === 'AWS::DynamoDB::Table')
      .map(([id]) => id);
    expect(tables).toEqual([expect.stringMatching(/^EventsTable/)]);
    expect(readdirSync(join(dir, 'cdk.out.test')).some((f) => f.startsWith('Stepwise-CaseDesk-dev'))).toBe(true);
  });
});
