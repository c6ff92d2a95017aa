/**
 * A lifecycle is a plugin: adding `statemachines/<name>/statechart.yaml` to a project gives it its
 * own CLI commands and its own stack, with no engine edit. The test works on a throwaway copy of
 * the project and runs the real CLI (on DynamoDB Local) and `cdk synth` there, as a user would.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { copyFixtureProject } from '../support/fixture-project.ts';
import { cdkSynthStack, snapshotFiles, stepwise } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-lifecycle-plugin-');
const json = (text: string) => JSON.parse(text) as any;
const SAMPLE = 'statemachines/order-lifecycle/samples/orders.jsonl';

describe('a second lifecycle (orders) added to a project', () => {
  let dir: string;
  let before: Map<string, string>;
  beforeAll(() => {
    dir = copyFixtureProject(tempDir(), { built: true });
    before = snapshotFiles(dir);
    cpSync(join(PACKAGE_ROOT, 'test/fixtures/plugins/order-lifecycle'), dir, {
      recursive: true,
      filter: (src) => !src.endsWith('README.md'),
    });
  });

  it('takes nothing but its own folder', () => {
    const after = snapshotFiles(dir);
    expect(
      [...after.keys()].filter((f) => !before.has(f)).every((f) => f.startsWith('statemachines/order-lifecycle/')),
    ).toBe(true);
    expect([...before].filter(([f, text]) => after.get(f) !== text)).toEqual([]);
  });

  it('replays its events through the local bus, its Express state machine and DynamoDB Local', {
    timeout: 180_000,
  }, async () => {
    const replay = await stepwise(dir, 'lifecycle', 'order-lifecycle', 'replay', SAMPLE, '--json');
    expect(replay.code, replay.err).toBe(0);
    expect(json(replay.out)).toEqual({
      orders: {
        'order-1': { state: 'delivered', path: 'delivered', context: {}, version: 4, conversation: 1, eventCount: 5 },
        // Shipping a cancelled order is only logged: cancelled is terminal.
        'order-2': { state: 'cancelled', path: 'cancelled', context: {}, version: 2, conversation: 1, eventCount: 3 },
      },
    });
    expect(replay.err).toContain(`${SAMPLE}: 9 lines, 9 events sent (1 already logged), 0 malformed`);

    const show = await stepwise(
      dir,
      'lifecycle',
      'order-lifecycle',
      'show',
      'order-1',
      '--from',
      SAMPLE,
      '--json',
      '--in-memory',
    );
    expect(show.code, show.err).toBe(0);
    const history = json(show.out);
    expect(history).toMatchObject({ orderId: 'order-1', state: 'delivered' });
    expect(history.events.map((e: any) => `${e.type} ${e.stateBefore}>${e.stateAfter}`)).toEqual([
      'order.placed new>placed',
      'order.paid placed>paid',
      'order.shipped paid>shipped',
      'order.delivered shipped>delivered',
      'order.refunded delivered>delivered',
    ]);
    expect(history.events[0].detail).toEqual({ total: 42.5 });
    expect(history.events[4].actions).toEqual([{ type: 'refuse', reason: 'unknown event type "order.refunded"' }]);

    const report = await stepwise(dir, 'lifecycle', 'order-lifecycle', 'report', '--from', SAMPLE, '--in-memory');
    expect(report.code, report.err).toBe(0);
    expect(report.out.split('\n')).toEqual(
      expect.arrayContaining([
        '2 orders, 8 events',
        'orders by state: delivered: 1, cancelled: 1',
        'orders delivered: 1 (order-1: 1, order-2: 0)',
        'cancellation rate: 50% (1 order.cancelled of 2 order.placed)',
        'time from payment to delivery: median 51.0 h, mean 51.0 h over 1 orders',
      ]),
    );
  });

  it('synthesizes its own stack: the event store, its bus with the rule for its sources, and its named Express state machine', {
    timeout: 300_000,
  }, async () => {
    const stack = 'Stepwise-OrderLifecycle-dev';
    const template = await cdkSynthStack(dir, stack);
    const of = (type: string) =>
      Object.entries(template.Resources).filter(([, r]: any) => r.Type === type) as [string, any][];
    expect(of('AWS::DynamoDB::Table').map(([id]) => id)).toEqual([expect.stringMatching(/^OrdersTable/)]);
    expect(of('AWS::Events::EventBus').map(([, r]) => r.Properties.Name)).toEqual(['stepwise-dev-order-lifecycle']);
    const [[, machine]] = of('AWS::StepFunctions::StateMachine') as [[string, any]];
    expect(machine.Metadata['stepwise:workflow']).toBe('order-lifecycle');
    expect(machine.Properties).toMatchObject({
      StateMachineName: 'Stepwise-OrderLifecycle-dev-order-lifecycle',
      StateMachineType: 'EXPRESS',
    });
    const incoming = of('AWS::Events::Rule').find(([id]) => id.startsWith('IncomingOrderEvents'))![1];
    expect(incoming.Properties.EventPattern).toEqual({ source: ['shop.orders', 'stepwise.replay'] });
    expect(incoming.Properties.Targets[0].Arn).toEqual({ Ref: of('AWS::StepFunctions::StateMachine')[0]![0] });
    // No feature: no listener, no timers; the state machine's three functions and the outbox publisher.
    expect(of('AWS::Lambda::Function')).toHaveLength(4);
    expect(of('AWS::Scheduler::ScheduleGroup')).toEqual([]);
    expect(of('AWS::CloudWatch::Dashboard').map(([, r]) => r.Properties.DashboardName)).toEqual([
      'stepwise-order-lifecycle-dev',
    ]);
  });

  it("keeps the project's own alias of the first lifecycle, and lists both lifecycles", {
    timeout: 120_000,
  }, async () => {
    const help = await stepwise(dir, 'member', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('stepwise lifecycle member-journey');
    const unknown = await stepwise(dir, 'lifecycle', 'nope', 'replay', SAMPLE);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^stepwise: unknown command "nope" \(commands: member-journey, order-lifecycle\)\n$/);
  });
});
