import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentWorkflow } from '../../../src/cdk/constructs/agent-workflow.ts';
import { DefinitionError } from '../../../src/core/errors.ts';
import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import { fromTemplates, synthesize, synthProject } from '../../../src/local/cloud/synth.ts';
import { memoryLifecycleStore } from '../../../src/runtime/lifecycle/store.ts';
import { triagePlugin } from '../../fixtures/triage-plugin.ts';
import { fixtureEnv } from '../../support/fixture-project.ts';

const scratch = mkdtempSync(join(tmpdir(), 'stepwise-synth-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('synthesize', () => {
  it('returns every template and state machine, with the definition resolved, and leaves no cdk.out folder behind', () => {
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = scratch;
    try {
      const synthesized = synthesize((app) => {
        const stack = new Stack(app, 'TriageSynth');
        new AgentWorkflow(stack, 'Triage', {
          plugin: triagePlugin(),
          config: fixtureEnv('dev'),
        });
      });
      expect(Object.keys(synthesized.templates)).toEqual(['TriageSynth']);
      expect(synthesized.stateMachines).toHaveLength(1);
      const [sm] = synthesized.stateMachines;
      expect(sm).toMatchObject({
        stack: 'TriageSynth',
        workflowName: 'triage',
        type: 'STANDARD',
        name: 'TriageSynth-triage',
      });
      expect(sm!.arn).toBe(`arn:aws:states:us-east-1:123456789012:stateMachine:${sm!.logicalId}`);
      expect(JSON.stringify(sm!.definition)).not.toMatch(/Fn::|\$\{Token/);
      expect(readdirSync(scratch)).toEqual([]);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
  });

  it('synthesizes the project app once per environment', async () => {
    const dev = await synthProject('dev');
    expect(await synthProject('dev')).toBe(dev);
    expect(Object.keys(dev.templates).sort()).toEqual([
      'Stepwise-CaseDesk-dev',
      'Stepwise-CheckpointReview-dev',
      'Stepwise-ConsensusPick-dev',
      'Stepwise-MemberJourney-dev',
      'Stepwise-ReplyWait-dev',
    ]);
    expect(
      dev.stateMachines
        .map((m) => m.workflowName)
        .filter(Boolean)
        .sort(),
    ).toEqual(['case-desk', 'checkpoint-review', 'consensus-pick', 'member-journey', 'reply-wait']);
  });

  it('finds a lifecycle state machine by its readable name, its ARN and its lifecycle, and runs it', async () => {
    const runtime = await LocalRuntime.create({
      app: await synthProject('dev'),
      historyDir: false,
      services: { store: memoryLifecycleStore() },
    });
    const byName = runtime.stateMachine('Stepwise-MemberJourney-dev-member-journey');
    expect(byName.workflowName).toBe('member-journey');
    expect(runtime.stateMachine(byName.arn)).toBe(byName);
    expect(runtime.stateMachine('member-journey')).toBe(byName);
    const envelope = {
      version: '0',
      id: 'eb-1',
      'detail-type': 'member.sneezed',
      source: 'stepwise.crm',
      account: '1',
      time: '2026-01-01T00:00:00Z',
      region: 'us-east-1',
      resources: [],
      detail: { memberId: 'm-1' },
    };
    const run = await runtime.startExecution('Stepwise-MemberJourney-dev-member-journey', envelope);
    expect(run.status).toBe('SUCCEEDED');
    expect(
      run.events.filter((e) => e.type === 'TaskStateEntered').map((e) => e.stateEnteredEventDetails!.name),
    ).toEqual(['Load member', 'Unknown event', 'Persist']);
  });
});

describe('fromTemplates', () => {
  it('rejects a state machine whose definition it cannot read', () => {
    const bad = {
      Resources: { M: { Type: 'AWS::StepFunctions::StateMachine', Properties: { DefinitionString: '{not json' } } },
    };
    expect(() => fromTemplates({ S: bad })).toThrow(DefinitionError);
    expect(() => fromTemplates({ S: bad })).toThrow(/template S: Resources\.M\.Properties\.DefinitionString/);
    const s3 = {
      Resources: { M: { Type: 'AWS::StepFunctions::StateMachine', Properties: { DefinitionS3Location: {} } } },
    };
    expect(() => fromTemplates({ S: s3 })).toThrow(/S3 definitions are not supported locally/);
  });
});
