/**
 * Delayed transitions (`after` on a state) as the definitions see them: loading, the one-line
 * errors, the Mermaid arrows and the XState `after` export, which XState runs on a simulated clock.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock, setup } from 'xstate';
import { PACKAGE_ROOT } from '../../../src/core/paths.ts';
import { durationMs } from '../../../src/definitions/lifecycle/delays.ts';
import { loadLifecycle, parseLifecycle } from '../../../src/definitions/lifecycle/loader.ts';
import { lifecycleToMermaid } from '../../../src/definitions/lifecycle/mermaid.ts';
import { handlerOf } from '../../../src/definitions/lifecycle/schema.ts';
import { TERMINAL_TAG, toXStateConfig } from '../../../src/definitions/lifecycle/xstate.ts';

const ROOT = join(PACKAGE_ROOT, 'test/fixtures/lifecycles');
const def = loadLifecycle('order-refunds', ROOT);
const DAY = 86_400_000;

/** A small chart with `body` as its states (indented under `states:`). */
const chart = (states: string, extra = '') => `name: mini
description: A small lifecycle.
version: 1.0.0
${extra}initial: idle
states:
${states}`;

const parseError = (text: string) => {
  try {
    parseLifecycle(text, 'mini.yaml');
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('the chart loaded');
};

describe('loading delayed transitions', () => {
  it('gives each its own event, handled by the declaring state and inherited by its children', () => {
    expect(def.states.delivered!.after).toEqual([
      {
        key: '14d',
        type: 'after.delivered.14d',
        delay: { ms: 14 * DAY },
        transition: { kind: 'goto', target: 'completed', actions: [] },
      },
    ]);
    expect(def.states.awaiting_payment!.after[0]!.delay).toEqual({ field: 'payWithin' });
    expect(def.events).toEqual(expect.arrayContaining(['after.open.30d', 'after.delivered.14d']));
    // The parent's timer applies in both its children, and nowhere else.
    expect(handlerOf(def, 'paid', 'after.open.30d')).toMatchObject({ declaredIn: 'open' });
    expect(handlerOf(def, 'awaiting_payment', 'after.open.30d')).toMatchObject({ declaredIn: 'open' });
    expect(handlerOf(def, 'delivered', 'after.open.30d')).toBeUndefined();
    // Scheduler delivers the timers, so the lifecycle applies its source.
    expect(def.sources).toContain('stepwise.scheduler');
  });

  it('reads durations in seconds, minutes, hours, days and weeks, and nothing else', () => {
    expect(['30s', '90m', '36h', '14d', '2w'].map(durationMs)).toEqual([
      30_000,
      90 * 60_000,
      36 * 3_600_000,
      14 * DAY,
      14 * DAY,
    ]);
    expect(['14', '0d', '1.5d', '14 days', 'P14D', '-1d'].map(durationMs)).toEqual(Array(6).fill(undefined));
  });

  it.each([
    [
      'a delay that is not a duration',
      '  idle: { on: { go: a } }\n  a: { after: { 14days: b } }\n  b: {}',
      'states.a.after',
    ],
    [
      'an unknown target',
      '  idle: { on: { go: a } }\n  a: { after: { 14d: nowhere } }',
      'states.a.after.14d: unknown state "nowhere"',
    ],
    [
      'a parent as target',
      '  idle: { on: { go: a } }\n  a: { after: { 1d: p } }\n  p: { states: { c: {} } }',
      'states.a.after.1d: "p" is a parent state; targets must be leaves',
    ],
    [
      'a leaf targeting itself',
      '  idle: { on: { go: a } }\n  a: { after: { 1d: a } }',
      'states.a.after.1d: a delayed transition to the state itself would do nothing',
    ],
    [
      'a delay on the initial state',
      '  idle: { on: { go: a }, after: { 1d: a } }\n  a: {}',
      'states.idle.after: "idle" holds the initial state',
    ],
    [
      'context actions without follow-ups',
      '  idle: { on: { go: a } }\n  a: { after: { 1d: { target: b, actions: [stopFollowUps] } } }\n  b: {}',
      'states.a.after.1d: context actions need the followUps feature',
    ],
    [
      'an event type of its own starting after.',
      '  idle: { on: { after.a.1d: a } }\n  a: {}',
      'states.idle.on.after.a.1d: "after.a.1d": event types starting "after." are the delayed transitions\' own',
    ],
  ])('refuses %s in one line naming the field', (_, states, message) => {
    const error = parseError(chart(states));
    expect(error).toContain(`mini.yaml: ${message}`);
    expect(error).not.toContain('\n');
  });

  it('refuses a delay on a parent of the initial state', () => {
    const error = parseError(chart('  p:\n    after: { 1d: b }\n    states: { idle: { on: { go: b } } }\n  b: {}'));
    expect(error).toContain('mini.yaml: states.p.after: "p" holds the initial state');
  });
});

describe('drawing delayed transitions', () => {
  it('draws an arrow labelled with the delay from the state that declares it', () => {
    const lines = lifecycleToMermaid(def).split('\n');
    expect(lines).toContain('    open --> expired : after 30d');
    expect(lines).toContain('    awaiting_payment --> cancelled : after detail.payWithin');
    expect(lines).toContain('    delivered --> completed : after 14d');
  });
});

describe('exporting delayed transitions to XState', () => {
  const exported = toXStateConfig(def);

  it('writes them as `after`: a duration in milliseconds, a detail delay as a named delay', () => {
    expect(exported.states!.delivered!.after).toEqual({ [String(14 * DAY)]: { target: '#completed' } });
    expect(exported.states!.open!.after).toEqual({ [String(30 * DAY)]: { target: '#expired' } });
    expect(exported.states!.open!.states!.awaiting_payment!.after).toEqual({
      'detail.payWithin': { target: '#cancelled' },
    });
  });

  it('runs in XState: the refund window closes when a simulated clock crosses 14 days, not before', () => {
    const clock = new SimulatedClock();
    const machine = setup({
      types: { events: {} as { type: string; detail?: Record<string, unknown> } },
      delays: { 'detail.payWithin': ({ event }) => durationMs(String(event.detail?.payWithin)) ?? 0 },
    }).createMachine(JSON.parse(JSON.stringify(exported)));
    const actor = createActor(machine, { clock }).start();
    for (const type of ['order.placed', 'order.paid', 'order.delivered'])
      actor.send({ type, detail: { payWithin: '3d' } });
    expect(actor.getSnapshot().value).toBe('delivered');
    clock.increment(14 * DAY - 1);
    expect(actor.getSnapshot().value).toBe('delivered');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('completed');
    expect(actor.getSnapshot().hasTag(TERMINAL_TAG)).toBe(true);
  });

  it('cancels the timer when the state is left: a refund request inside the window is never completed', () => {
    const clock = new SimulatedClock();
    const actor = createActor(createFixtureMachine(exported), { clock }).start();
    for (const type of ['order.placed', 'order.paid', 'order.delivered', 'refund.requested']) actor.send({ type });
    clock.increment(30 * DAY);
    expect(actor.getSnapshot().value).toBe('refunding');
  });
});

function createFixtureMachine(exported: ReturnType<typeof toXStateConfig>) {
  return setup({ delays: { 'detail.payWithin': () => 3 * DAY } }).createMachine(JSON.parse(JSON.stringify(exported)));
}
