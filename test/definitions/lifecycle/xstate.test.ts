/**
 * The XState v5 export: its shape (what Stately's editor imports) and a differential test: random
 * event sequences through `applyEvent` and through XState's pure `transition()` on the exported
 * machine agree on the state and the context after every logged event (raised ones included),
 * except for the documented CRM echo.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AnyMachineSnapshot,
  assign,
  createMachine,
  initialTransition,
  type StateValue,
  setup,
  transition as xstateTransition,
} from 'xstate';
import type { AgentConfig } from '../../../src/definitions/lifecycle/agent-config.ts';
import type { LifecycleEvent } from '../../../src/definitions/lifecycle/schema.ts';
import {
  DETAIL_EQUALS_GUARD,
  TERMINAL_TAG,
  toXStateConfig,
  XSTATE_ACTIONS,
} from '../../../src/definitions/lifecycle/xstate.ts';
import { applyEvent, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { agent, agentNames, def, NO_GOAL } from '../../runtime/lifecycle/support.ts';

const exported = toXStateConfig(def);

type MemberEvent = { type: string; detail?: Record<string, unknown> };
const machine = setup({
  types: { context: {} as { followUpsStopped: boolean }, events: {} as MemberEvent },
  actions: {
    clearFollowUpStop: assign({ followUpsStopped: false }),
    stopFollowUps: assign({ followUpsStopped: true }),
    startConversation: assign({ followUpsStopped: false }),
  },
  guards: {
    [DETAIL_EQUALS_GUARD]: ({ event }, params: { field: string; value: string }) =>
      event.detail?.[params.field] === params.value,
  },
}).createMachine(JSON.parse(JSON.stringify(exported)));

/** The leaf an XState state value is in (`{ active: { qualification: 'engaged' } }` → `engaged`). */
function leafOf(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [[, child]] = Object.entries(value) as [[string, StateValue]];
  return leafOf(child);
}

describe('toXStateConfig', () => {
  it('is plain JSON with an id per state, compound states with an initial child, terminal tags and the named actions', () => {
    expect(JSON.parse(JSON.stringify(exported))).toEqual(exported);
    expect(exported).toMatchObject({ id: 'member-journey', initial: 'idle', context: { followUpsStopped: false } });
    expect(exported.states!.active).toMatchObject({ id: 'active', initial: 'qualification' });
    expect(exported.states!.active!.states!.qualification!.states!.engaged).toMatchObject({
      id: 'engaged',
      entry: [{ type: 'clearFollowUpStop' }],
    });
    expect(exported.states!.goal_hit!.tags).toEqual([TERMINAL_TAG]);
    expect(exported.states!.goal_hit!.on!['member.message_sent']).toEqual({
      target: '#engaged',
      actions: [{ type: 'startConversation' }],
    });
    expect(exported.states!.active!.on!['follow_up.stopped']).toEqual({ actions: [{ type: 'stopFollowUps' }] });
    // `payment.received: null` on closed blocks the parent's transition.
    expect(exported.states!.active!.states!.closed!.on!['payment.received']).toEqual({
      description: 'only logged here',
    });
    // A parent's transition to the leaf itself is no transition here.
    expect(exported.states!.active!.states!.closed!.on!['deal.closed']).toEqual({
      description: 'a transition to the current leaf is no transition',
    });
    const crm = exported.on!['crm.state_set'] as { target: string; guard: { params: { value: string } } }[];
    expect(crm.map((t) => t.target)).toEqual(def.leaves.map((l) => `#${l}`));
    const used = new Set(
      JSON.stringify(exported)
        .match(/"type":"[a-zA-Z]+"/g)!
        .map((m) => m.slice(8, -1)),
    );
    expect([...used].sort()).toEqual([...XSTATE_ACTIONS, DETAIL_EQUALS_GUARD].sort());
  });

  it('is a valid XState v5 machine: createMachine accepts it and every state resolves', () => {
    const m = createMachine(JSON.parse(JSON.stringify(exported)));
    for (const leaf of def.leaves) expect(m.getStateNodeById(leaf).path.join('.')).toBe(def.states[leaf]!.path);
  });
});

const CONFIGS: AgentConfig[] = [NO_GOAL, ...agentNames().map(agent)];
const eventArb: fc.Arbitrary<MemberEvent> = fc.oneof(
  { arbitrary: fc.constantFrom(...def.events).map((type) => ({ type })), weight: 12 },
  {
    arbitrary: fc
      .constantFrom<unknown>(...def.leaves, 'active', 'hot', 7, undefined)
      .map((state) => ({ type: 'crm.state_set', ...(state !== undefined && { detail: { state } }) })),
    weight: 4,
  },
  {
    arbitrary: fc.integer({ min: 0, max: 20000 }).map((value) => ({ type: 'deal.closed', detail: { value } })),
    weight: 1,
  },
  {
    arbitrary: fc
      .constantFrom('hi', 'please call me')
      .map((text) => ({ type: 'member.message_sent', detail: { text } })),
    weight: 2,
  },
  {
    arbitrary: fc.constantFrom('/pricing', '/blog').map((url) => ({ type: 'link.clicked', detail: { url } })),
    weight: 1,
  },
  { arbitrary: fc.constant({ type: 'member.sneezed' }), weight: 1 },
);

describe('differential: applyEvent and XState transition() on the exported machine', () => {
  it('agree on state and context after every logged event, for every agent config of the lifecycle', () => {
    let compared = 0;
    let echoes = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...CONFIGS),
        fc.array(eventArb, { minLength: 30, maxLength: 80 }),
        (config, drafts) => {
          let ours = initialSnapshot(def);
          let [theirs] = initialTransition(machine) as [AnyMachineSnapshot, unknown];
          drafts.forEach((d, i) => {
            // Deliberate difference: a CRM echo of the current leaf is no transition here, a re-entry in XState.
            if (d.type === 'crm.state_set' && d.detail?.state === ours.state) {
              echoes++;
              return;
            }
            const event: LifecycleEvent = {
              id: `e${i}`,
              entityId: 'member',
              time: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString(),
              ...d,
            };
            const r = applyEvent(def, ours, event, config);
            // Raised events (goal.hit, follow_up.stopped, conversation.stopped) are ordinary events for XState.
            for (const logged of r.events) {
              [theirs] = xstateTransition(machine, theirs, {
                type: logged.type,
                ...(logged.detail && { detail: logged.detail }),
              }) as [AnyMachineSnapshot, unknown];
              expect(leafOf(theirs.value), `${logged.type} (${logged.stateBefore} -> ${logged.stateAfter})`).toBe(
                logged.stateAfter,
              );
              compared++;
            }
            ours = r.snapshot;
            expect(theirs.context).toEqual(ours.context);
            expect(theirs.hasTag(TERMINAL_TAG)).toBe(def.states[ours.state]!.terminal);
          });
        },
      ),
      { numRuns: 600 },
    );
    // The run exercised enough to mean something (about 35k comparisons), and echoes were rare.
    expect(compared).toBeGreaterThan(20_000);
    expect(echoes).toBeLessThan(compared / 10);
  });
});
