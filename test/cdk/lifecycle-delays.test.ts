/**
 * A lifecycle whose only timers are delayed transitions (`after`), synthesized: a transition Task
 * per delayed transition in valid ASL, the Scheduler group, its delivery role and the timers
 * listener (and no follow-up sender), the scheduler's source on the incoming rule, cdk-nag clean.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { lifecycleStackName, LIFECYCLE_STATES as S } from '../../src/cdk/names.ts';
import { LifecycleStack } from '../../src/cdk/stacks/lifecycle-stack.ts';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { loadLifecycle } from '../../src/definitions/lifecycle/loader.ts';
import { describeTransitions } from '../../src/definitions/lifecycle/routes.ts';
import { synthesize } from '../../src/local/cloud/synth.ts';
import type { Json } from '../local/sessions/lifecycle/support.ts';
import { fixtureEnv } from '../support/fixture-project.ts';

const validateAsl = createRequire(import.meta.url)('asl-validator') as (
  d: unknown,
  o?: { checkArn?: boolean; checkPaths?: boolean },
) => { isValid: boolean; errorsText: () => string };

const def = loadLifecycle('order-refunds', join(PACKAGE_ROOT, 'test/fixtures/lifecycles'));
const stackName = lifecycleStackName(def.name, 'dev');
const app = new App({ context: { env: 'dev', 'aws:cdk:bundling-stacks': [] } });
const stack = new LifecycleStack(app, stackName, { config: fixtureEnv('dev'), lifecycle: def });
const template = Template.fromStack(stack);
const asl = synthesize(
  (a) => new LifecycleStack(a, stackName, { config: fixtureEnv('dev'), lifecycle: def }),
).stateMachines.find((m) => m.workflowName === def.name)!.definition as unknown as { States: Record<string, Json> };

describe('a lifecycle with delayed transitions', () => {
  it('routes each delayed transition to a Task of its own, in valid ASL', () => {
    const result = validateAsl(asl, { checkArn: false, checkPaths: true });
    expect(result.isValid, result.errorsText()).toBe(true);
    const routes = asl.States[S.route]!.Choices.map((c: Json) => c.Next);
    for (const type of ['after.open.30d', 'after.awaiting_payment.detail.payWithin', 'after.delivered.14d']) {
      expect(routes).toContain(type);
      expect(asl.States[type]!.Comment).toBe(`Applies ${type}: ${describeTransitions(def, type)}.`);
    }
    expect(asl.States['after.open.30d']!.Comment).toBe(
      'Applies after.open.30d: awaiting_payment, paid → expired; elsewhere logged only.',
    );
  });

  it('has the Scheduler group, its delivery role and the timers listener, and applies what Scheduler delivers', () => {
    expect(stack.timers).toBeDefined();
    expect(stack.listeners.timers).toBeDefined();
    expect(stack.listeners.followUpSender).toBeUndefined();
    template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'stepwise-dev-order-refunds-timers' });
    const rule = Object.values(template.findResources('AWS::Events::Rule')).find((r) =>
      r.Properties.Description?.startsWith('Events from shop.orders'),
    )!;
    expect(rule.Properties.EventPattern.source).toEqual(['shop.orders', 'stepwise.replay', 'stepwise.scheduler']);
  });

  it('is cdk-nag clean', () => {
    const findings = new AwsSolutionsChecks()
      .validateScope(app)
      .violations.flatMap((v) =>
        v.violatingResources.map((r) => `${v.ruleName}: ${r.constructPath ?? r.resourceLogicalId}`),
      );
    expect(findings).toEqual([]);
  });
});
