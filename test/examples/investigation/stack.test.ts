/**
 * The pause, deployed: the synthesized checkpoint is a waitForTaskToken Task with timeouts and an escalation Catch; the
 * stack grants resuming; cdk-nag stays clean.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { loadWorkflowFrom } from '../../../src/definitions/workflow/loader.ts';
import { workflowToMermaid } from '../../../src/definitions/workflow/mermaid.ts';
import { actionsOf, functionArn, type Json } from '../../support/app.ts';
import { synthApp } from '../support/app.ts';

const { stacks } = synthApp('dev');
const stack = stacks.workflows.investigation!;
const template = Template.fromStack(stack);
const machineId = Object.keys(template.findResources('AWS::StepFunctions::StateMachine'))[0]!;
/** The ASL with the partition and function ARNs filled in (stateMachineOf handles function ARNs only). */
const asl: Json = JSON.parse(
  (
    template.findResources('AWS::StepFunctions::StateMachine')[machineId]!.Properties.DefinitionString[
      'Fn::Join'
    ][1] as unknown[]
  )
    .map((p) =>
      typeof p === 'string'
        ? p
        : (p as Json).Ref === 'AWS::Partition'
          ? 'aws'
          : functionArn((p as Json)['Fn::GetAtt'][0]),
    )
    .join(''),
);

describe('the investigation stack', () => {
  it('is Stepwise-Investigation-dev', () => {
    expect(stack.stackName).toBe('Stepwise-Investigation-dev');
  });

  it('compiles the checkpoint: a Choice on the paused edge and the step output, then an events:putEvents.waitForTaskToken Task', () => {
    expect(asl.States['03-record'].Next).toBe('03-record.checkpoint');
    const choice = asl.States['03-record.checkpoint'];
    expect(choice.Type).toBe('Choice');
    expect(choice.Default).toBe('03-record.route');
    expect(choice.Choices).toEqual([
      {
        And: [
          { Variable: '$.result.next', StringEquals: '02-investigate' },
          { Variable: '$.result.count', NumericLessThan: 18 },
          {
            And: [
              { Variable: '$.result.fields.checkpoint_required', IsPresent: true },
              { Variable: '$.result.fields.checkpoint_required', BooleanEquals: true },
            ],
          },
        ],
        Next: '03-record.pause',
      },
    ]);
    const pause = asl.States['03-record.pause'];
    expect(pause).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::events:putEvents.waitForTaskToken',
      TimeoutSeconds: 86400,
      HeartbeatSeconds: 3600,
      ResultPath: '$.result.data.checkpoint',
      Next: '03-record.route',
    });
    expect(pause.Catch).toEqual([
      { ErrorEquals: ['States.Timeout', 'States.HeartbeatTimeout'], ResultPath: '$.error', Next: '04-escalate' },
      { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: '04-escalate' },
    ]);
    const [entry] = pause.Parameters.Entries;
    expect(entry).toMatchObject({ Source: 'stepwise.checkpoints', DetailType: 'Stepwise Checkpoint Requested' });
    expect(entry.Detail).toMatchObject({
      'taskToken.$': '$$.Task.Token',
      'execution.$': '$$.Execution.Id',
      workflow: 'investigation',
      step: '03-record',
      'next.$': '$.result.next',
      'fields.$': '$.result.fields',
      actionsField: 'required_actions',
      timeoutSeconds: 86400,
      heartbeatSeconds: 3600,
    });
  });

  it('lets the state machine publish the checkpoint and outputs a policy that resumes it (SendTaskSuccess/Failure/Heartbeat on this state machine only)', () => {
    const smRole = template.findResources('AWS::StepFunctions::StateMachine')[machineId]!.Properties.RoleArn[
      'Fn::GetAtt'
    ][0];
    const smStatements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as Json[]).some((r) => r.Ref === smRole))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[]);
    expect(smStatements.flatMap(actionsOf)).toContain('events:PutEvents');
    const policies = Object.entries(template.findResources('AWS::IAM::ManagedPolicy'));
    expect(policies).toHaveLength(1);
    const [policyId, policy] = policies[0]!;
    expect(policy.Properties.PolicyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'],
        Resource: { Ref: machineId },
      },
    ]);
    expect(template.toJSON().Outputs.ResumeCheckpointsPolicyArn.Value).toEqual({ Ref: policyId });
  });

  it('draws the checkpoint and its timeout edge', () => {
    const mermaid = workflowToMermaid(stack.workflow.workflow);
    expect(mermaid).toContain('s_03_record --> s_02_investigate : after checkpoint if checkpoint_required');
    expect(mermaid).toContain('s_03_record --> s_04_escalate : checkpoint timeout');
  });

  it('passes cdk-nag AwsSolutions with no unacknowledged finding', () => {
    const report = new AwsSolutionsChecks().validateScope(stack);
    expect(report.violations.map((v) => `${v.severity} ${v.ruleName}`)).toEqual([]);
  });
});

describe('pause validation', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  /** The investigation's definition with 03-record's `pause` block replaced. */
  function withPause(pause: string): () => unknown {
    const root = mkdtempSync(join(tmpdir(), 'pause-'));
    dirs.push(root);
    const dir = join(root, 'investigation');
    cpSync(join(STATEMACHINES_DIR, 'investigation'), dir, { recursive: true });
    const file = join(dir, 'steps', '03-record.md');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/pause:\n( {2}.*\n)+/, `pause:\n${pause}\n`));
    return () => loadWorkflowFrom(dir);
  }

  it.each([
    ['  timeoutSeconds: 60\n  onTimeout: 09-nowhere', 'pause.onTimeout: unknown step "09-nowhere"'],
    [
      '  timeoutSeconds: 60\n  onTimeout: 04-escalate\n  edges: [01-plan]',
      'pause.edges.0: "01-plan" is not a declared edge',
    ],
    [
      '  timeoutSeconds: 60\n  onTimeout: 04-escalate\n  when: outcome',
      'pause.when: "outcome" is not a boolean output',
    ],
    [
      '  timeoutSeconds: 60\n  heartbeatSeconds: 60\n  onTimeout: 04-escalate',
      'pause.heartbeatSeconds: must be less than timeoutSeconds (60)',
    ],
    [
      '  timeoutSeconds: 60\n  onTimeout: 04-escalate\n  actions: nothing',
      'pause.actions: "nothing" is not one of the step\'s outputs',
    ],
  ])('refuses %j', (pause, message) => {
    expect(withPause(pause)).toThrow(message);
  });

  it('accepts a minimal pause (every edge but DONE)', () => {
    expect(withPause('  timeoutSeconds: 60\n  onTimeout: 04-escalate')).not.toThrow();
  });
});
