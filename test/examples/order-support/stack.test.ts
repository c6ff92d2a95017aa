/**
 * The order-support example and its shared order-ticket workflow synthesized: every construct
 * compiled to its native state (Map, Parallel, startExecution.sync:2, event waits, a Wait until a
 * timestamp of the state), valid ASL, the
 * parent's role granted exactly the child, both stacks cdk-nag clean.
 */
import { createRequire } from 'node:module';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { addStepwiseStacks, type StepwiseStacks } from '../../../src/cdk/stepwise-app.ts';
import { synthesize } from '../../../src/local/cloud/synth.ts';
import { loadProject } from '../../../src/project/project.ts';
import { actionsOf, type Json } from '../../support/app.ts';
import { exampleEnv } from '../support/config.ts';

// asl-validator ships no type declarations.
const validateAsl = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => {
  isValid: boolean;
  errorsText: (separator?: string) => string;
};

const project = await loadProject();
let stacks!: StepwiseStacks;
// Tokens resolved as the local runtime resolves them, so the ASL is the one that runs.
const synthesized = synthesize((app) => {
  stacks = addStepwiseStacks(app, exampleEnv('dev'), project);
});
const WORKFLOWS = ['order-support', 'order-ticket'] as const;
const templates = Object.fromEntries(WORKFLOWS.map((w) => [w, Template.fromStack(stacks.workflows[w]!)]));
const asl = (workflow: string) =>
  synthesized.stateMachines.find((m) => m.workflowName === workflow)!.definition as Json;
const states = asl('order-support').States as Record<string, Json>;

describe('order-support and order-ticket synthesized', () => {
  it.each(WORKFLOWS)('%s: valid ASL, and no unacknowledged cdk-nag finding', (workflow) => {
    const result = validateAsl(asl(workflow));
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
    const report = new AwsSolutionsChecks().validateScope(stacks.workflows[workflow]!);
    expect(report.violations.map((v) => `${v.severity} ${v.ruleName}`)).toEqual([]);
  });

  it("classifies the email record's attachments in an inline Map, four at once, and joins them tolerating one failure", () => {
    expect(states['03-classify-attachments.map']).toMatchObject({
      Type: 'Map',
      ItemsPath: '$.input.email.attachments',
      MaxConcurrency: 4,
    });
    expect(states['03-classify-attachments']).toMatchObject({ Type: 'Task', Next: expect.any(String) });
  });

  it('looks the order and the customer up in a Parallel state of two branches, a failure caught to the hand-off', () => {
    const parallel = states['05-look-up.branches']!;
    expect(parallel.Type).toBe('Parallel');
    expect(parallel.Branches.map((b: Json) => b.StartAt)).toEqual(['05-look-up.order', '05-look-up.customer']);
    expect(JSON.stringify(states['05-look-up']!.Catch)).toContain('99-hand-off');
  });

  it('waits for the reply a day, then two more days, each a .waitForTaskToken Task with its deadline', () => {
    expect(states['10-await-reply.wait-event']).toMatchObject({ TimeoutSeconds: 86_400 });
    expect(states['12-await-second-reply.wait-event']).toMatchObject({ TimeoutSeconds: 172_800 });
    expect(String(states['10-await-reply.wait-event']!.Resource)).toContain('waitForTaskToken');
  });

  it('waits for a parcel in transit in a Wait state until data.order.expectedDelivery, a bad timestamp to the fallback', () => {
    const waits = Object.entries(states).filter(([, s]) => s.Type === 'Wait');
    expect(waits.map(([name]) => name)).toEqual(['16-wait-for-delivery.wait']);
    // The step's input is the previous step's output: its state is under $.result.
    expect(states['16-wait-for-delivery.wait']).toMatchObject({
      TimestampPath: '$.result.data.order.expectedDelivery',
    });
    expect(JSON.stringify(states)).toContain('InvalidTimestamp');
  });

  it("opens the ticket with startExecution.sync:2 on order-ticket, and the parent's role may start only it", () => {
    expect(states['14-open-ticket']).toMatchObject({ Resource: 'arn:aws:states:::states:startExecution.sync:2' });
    const template = templates['order-support']!;
    const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine')).filter(
      (m) => m.Metadata?.['stepwise:workflow'],
    );
    const roleId = machine!.Properties.RoleArn['Fn::GetAtt'][0];
    const starts = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as Json[]).some((r) => r.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[])
      .filter((s) => actionsOf(s).includes('states:StartExecution'));
    expect(starts).toHaveLength(1);
    const resource = JSON.stringify(starts[0]!.Resource);
    expect(resource).toContain('stateMachine:Stepwise-OrderTicket-dev-order-ticket');
    expect(resource).not.toContain('*');
  });
});
