/** Properties of the lifecycle over random event sequences (fast-check). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgentConfig } from '../../../src/definitions/lifecycle/agent-config.ts';
import {
  type EntitySnapshot,
  EntitySnapshotSchema,
  type LifecycleEvent,
  type LoggedEvent,
  LoggedEventSchema,
} from '../../../src/definitions/lifecycle/schema.ts';
import {
  applyEvent,
  canReceiveFollowUp,
  initialSnapshot,
  transition,
} from '../../../src/runtime/lifecycle/transition.ts';
import { agent, agentNames, def, NO_GOAL } from './support.ts';

const CONFIGS: AgentConfig[] = [NO_GOAL, ...agentNames().map(agent)];

type Draft = Pick<LifecycleEvent, 'type' | 'detail'>;

const draft: fc.Arbitrary<Draft> = fc.oneof(
  { arbitrary: fc.constantFrom(...def.events).map((type): Draft => ({ type })), weight: 10 },
  {
    arbitrary: fc
      .option(fc.constantFrom<unknown>(...def.leaves, 'active', 'qualification', 'hot', 7), { nil: undefined })
      .map((state): Draft => ({ type: 'crm.state_set', ...(state !== undefined && { detail: { state } }) })),
    weight: 3,
  },
  {
    arbitrary: fc.integer({ min: 0, max: 20000 }).map((value): Draft => ({ type: 'deal.closed', detail: { value } })),
    weight: 2,
  },
  {
    arbitrary: fc
      .constantFrom('hi', 'please CALL ME', '')
      .map((text): Draft => ({ type: 'member.message_sent', detail: { text } })),
    weight: 3,
  },
  {
    arbitrary: fc.constantFrom('/pricing', '/blog').map((url): Draft => ({ type: 'link.clicked', detail: { url } })),
    weight: 2,
  },
  { arbitrary: fc.constantFrom('member.sneezed', 'call.rescheduled').map((type): Draft => ({ type })), weight: 1 },
);

const scenario = fc.record({
  config: fc.constantFrom(...CONFIGS),
  drafts: fc.array(draft, { maxLength: 60 }),
});

function events(drafts: readonly Draft[]): LifecycleEvent[] {
  return drafts.map((d, i) => ({
    id: `e${i}`,
    entityId: 'member',
    time: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString(),
    ...d,
  }));
}

/** The event store's loop: skip ids already logged, apply, append. */
function store(config: AgentConfig, incoming: readonly LifecycleEvent[]) {
  let snapshot = initialSnapshot(def);
  const log: LoggedEvent[] = [];
  const ids = new Set<string>();
  const batches: LoggedEvent[][] = [];
  const after: EntitySnapshot[] = [];
  for (const event of incoming) {
    if (ids.has(event.id)) continue;
    const r = applyEvent(def, snapshot, event, config);
    snapshot = r.snapshot;
    for (const e of r.events) ids.add(e.id);
    log.push(...r.events);
    batches.push(r.events);
    after.push(snapshot);
  }
  return { snapshot, log, batches, after };
}

const RUNS = { numRuns: 300 };

describe('lifecycle properties', () => {
  it('never leaves the statechart: every state is a leaf, every record has its schema shape', () => {
    fc.assert(
      fc.property(scenario, ({ config, drafts }) => {
        const { snapshot, log, after } = store(config, events(drafts));
        for (const s of [snapshot, ...after]) {
          expect(def.leaves).toContain(s.state);
          expect(EntitySnapshotSchema.parse(s)).toEqual(s);
        }
        for (const e of log) {
          expect(def.leaves).toContain(e.stateBefore);
          expect(def.leaves).toContain(e.stateAfter);
          expect(LoggedEventSchema.parse(e)).toEqual(e);
        }
      }),
      RUNS,
    );
  });

  it('logs every event once, in a contiguous seq; eventCount is the log length', () => {
    fc.assert(
      fc.property(scenario, ({ config, drafts }) => {
        const { snapshot, log, batches } = store(config, events(drafts));
        expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
        expect(snapshot.eventCount).toBe(log.length);
        expect(batches.map((b) => b[0]!.id)).toEqual(drafts.map((_, i) => `e${i}`));
        for (let i = 1; i < log.length; i++) expect(log[i]!.stateBefore).toBe(log[i - 1]!.stateAfter);
      }),
      RUNS,
    );
  });

  it('version counts applied transitions: +1 exactly when a step changes the state or runs an action', () => {
    fc.assert(
      fc.property(scenario, ({ config, drafts }) => {
        let s = initialSnapshot(def);
        let applied = 0;
        for (const event of events(drafts)) {
          const queue = [event];
          for (let next = queue.shift(); next; next = queue.shift()) {
            const r = transition(def, s, next, config);
            const changed = r.snapshot.state !== s.state || r.actions.some((a) => a.type !== 'refuse');
            expect(r.snapshot.version - s.version).toBe(changed ? 1 : 0);
            applied += changed ? 1 : 0;
            s = r.snapshot;
            queue.push(...r.emitted);
          }
        }
        expect(s.version).toBe(applied);
        // applyEvent is exactly this fold.
        expect(store(config, events(drafts)).snapshot).toEqual(s);
      }),
      RUNS,
    );
  });

  it('goals fire at most once per conversation, only with a goal, and end it; conversations only start from terminal states', () => {
    fc.assert(
      fc.property(scenario, ({ config, drafts }) => {
        const { log } = store(config, events(drafts));
        // The fuzzer also delivers goal.hit from outside (an operator marking the goal): it ends the
        // conversation like a raised one, and is only logged once the conversation is over. The CRM
        // may move a member between terminal states at will: that is not a goal being hit.
        const raised = log.filter((e) => e.type === 'goal.hit' && e.id.endsWith(':goal.hit'));
        if (!config.goal) expect(raised).toEqual([]);
        const reached = log.filter(
          (e) => e.type === 'goal.hit' && e.stateAfter === 'goal_hit' && e.stateBefore !== 'goal_hit',
        );
        expect(new Set(reached.map((e) => e.conversation)).size).toBe(reached.length);
        expect(new Set(raised.map((e) => e.conversation)).size).toBe(raised.length);
        for (const hit of raised) expect(hit.stateAfter).toBe('goal_hit');
        let conversation = 1;
        for (const e of log) {
          if (e.conversation !== conversation) {
            expect(e.conversation).toBe(conversation + 1);
            expect(def.states[e.stateBefore]!.terminal).toBe(true);
            expect(def.states[e.stateAfter]!.terminal).toBe(false);
            expect(e.actions[0]).toEqual({ type: 'startConversation', conversation: e.conversation });
            conversation = e.conversation;
          }
        }
      }),
      RUNS,
    );
  });

  it('canReceiveFollowUp: only in outreach/engaged, never right after follow-ups stop, always fresh on entering engaged', () => {
    fc.assert(
      fc.property(scenario, ({ config, drafts }) => {
        const { batches, after } = store(config, events(drafts));
        batches.forEach((batch, i) => {
          const s = after[i]!;
          if (canReceiveFollowUp(def, s)) expect(def.features.followUps!.states).toContain(s.state);
          const raisedStop = batch.some((e) => e.type === 'follow_up.stopped');
          if (raisedStop) expect(canReceiveFollowUp(def, s)).toBe(false);
          const [trigger] = batch;
          if (trigger!.stateAfter === 'engaged' && trigger!.stateBefore !== 'engaged')
            expect(s.context.followUpsStopped).toBe(raisedStop);
        });
      }),
      RUNS,
    );
  });

  it('redelivery is a no-op when the caller dedups by id; raised ids derive from the trigger, and the same input gives the same output', () => {
    fc.assert(
      fc.property(scenario, fc.array(fc.nat(), { maxLength: 20 }), ({ config, drafts }, picks) => {
        const original = events(drafts);
        const once = store(config, original);
        // Redeliver random earlier events right after later ones.
        const noisy = original.flatMap((e, i) => [
          e,
          ...picks
            .filter((p) => p % (original.length || 1) <= i)
            .slice(0, 2)
            .map((p) => original[p % original.length]!),
        ]);
        const again = store(config, noisy);
        expect(again.log).toEqual(once.log);
        expect(again.snapshot).toEqual(once.snapshot);
        for (const batch of once.batches)
          for (const raised of batch.slice(1)) expect(raised.id).toBe(`${batch[0]!.id}:${raised.type}`);
        expect(store(config, original)).toEqual(once);
      }),
      RUNS,
    );
  });
});
