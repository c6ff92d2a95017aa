/**
 * Every (leaf state, event type) pair against the documented transition table. The table below is
 * written out by hand; the README's table must say the same, and the transition function must do it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { initialSnapshot, transition } from '../../../src/runtime/lifecycle/transition.ts';
import { def, NO_GOAL } from './support.ts';

/**
 * A leaf name: go there. `(stopFollowUps)`: stay and stop follow-ups. `restart → x`: conversation N+1, then x.
 * `detail.state`: the CRM's leaf.
 */
type Cell = string;
const STAY_STOP = '(stopFollowUps)';

// Handlers every leaf under `active` has unless it overrides them.
const ACTIVE: Partial<Record<string, Cell>> = {
  'follow_up.stopped': STAY_STOP,
  'deal.closed': 'deal_closed',
  'payment.initiated': 'payment_pending',
  'payment.completed': 'deal_closed',
  'lead.opted_out': 'opted_out',
  'conversation.stopped': 'conversation_stopped',
  'goal.hit': 'goal_hit',
  'crm.state_set': 'detail.state',
};
const QUALIFICATION = { ...ACTIVE, 'meeting.booked': 'meeting_booked', 'meeting.attended': 'meeting_attended' };
const TERMINAL = {
  'agent.message_sent': 'restart → outreach',
  'lead.message_sent': 'restart → engaged',
  'crm.state_set': 'detail.state',
};

const EXPECTED: Record<string, Partial<Record<string, Cell>>> = {
  idle: {
    'agent.message_sent': 'outreach',
    'lead.message_sent': 'engaged',
    'follow_up.stopped': STAY_STOP,
    'lead.opted_out': 'opted_out',
    'conversation.stopped': 'conversation_stopped',
    'crm.state_set': 'detail.state',
    'goal.hit': 'goal_hit',
  },
  outreach: { ...QUALIFICATION, 'lead.message_sent': 'engaged', 'follow_ups.exhausted': 'cold' },
  engaged: { ...QUALIFICATION, 'follow_ups.exhausted': 'cold' },
  cold: { ...QUALIFICATION, 'lead.message_sent': 'engaged' },
  no_show: { ...QUALIFICATION, 'lead.message_sent': 'engaged' },
  opted_out: { ...QUALIFICATION, 'lead.message_sent': 'engaged', 'lead.opted_out': undefined },
  meeting_booked: { ...ACTIVE, 'meeting.missed': 'no_show', 'meeting.attended': 'meeting_attended' },
  meeting_attended: { ...ACTIVE },
  payment_pending: { ...ACTIVE, 'payment.initiated': undefined },
  deal_closed: {
    ...ACTIVE,
    'renewal.due': 'renewal_due',
    'deal.closed': undefined,
    'payment.initiated': undefined,
    'payment.completed': undefined,
  },
  renewal_due: { ...ACTIVE, 'agent.message_sent': 'renewal_outreach', 'lead.message_sent': 'renewal_engaged' },
  renewal_outreach: { ...ACTIVE, 'lead.message_sent': 'renewal_engaged' },
  renewal_engaged: { ...ACTIVE },
  goal_hit: TERMINAL,
  conversation_stopped: TERMINAL,
};

const cell = (leaf: string, event: string): Cell => EXPECTED[leaf]![event] ?? '·';

describe('transition table', () => {
  it('covers exactly the leaves of the statechart', () => {
    expect(def.leaves).toEqual(Object.keys(EXPECTED));
  });

  for (const leaf of Object.keys(EXPECTED)) {
    for (const event of def.events) {
      const expected = cell(leaf, event);
      it(`${leaf} + ${event} → ${expected}`, () => {
        const before = { ...initialSnapshot(def), state: leaf, version: 7, conversation: 3, eventCount: 20 };
        const crmTarget = leaf === 'renewal_engaged' ? 'cold' : 'renewal_engaged';
        const detail = event === 'crm.state_set' ? { state: crmTarget } : undefined;
        const r = transition(
          def,
          before,
          { id: 'e', entityId: 'l', type: event, time: '2025-01-01T00:00:00Z', ...(detail && { detail }) },
          NO_GOAL,
        );
        expect(r.emitted).toEqual([]);
        expect(r.snapshot.eventCount).toBe(21);
        const restart = /^restart → (\w+)$/.exec(expected);
        if (expected === '·') {
          expect(r.snapshot).toEqual({ ...before, eventCount: 21 });
          expect(r.actions).toEqual([]);
        } else if (expected === STAY_STOP) {
          expect(r.snapshot).toMatchObject({
            state: leaf,
            version: 8,
            conversation: 3,
            context: { followUpsStopped: true },
          });
        } else if (restart) {
          expect(r.snapshot).toMatchObject({ state: restart[1], version: 8, conversation: 4 });
          expect(r.actions[0]).toEqual({ type: 'startConversation', conversation: 4 });
        } else {
          const target = expected === 'detail.state' ? crmTarget : expected;
          const newConversation = def.states[leaf]!.terminal && !def.states[target]!.terminal;
          expect(r.snapshot).toMatchObject({ state: target, version: 8, conversation: newConversation ? 4 : 3 });
        }
      });
    }
  }

  it('the README documents the same table', () => {
    const readme = readFileSync(join(STATEMACHINES_DIR, 'lead-lifecycle', 'README.md'), 'utf8');
    const section = readme.split('## Transition table')[1]!.split('\n## ')[0]!;
    const rows = section
      .split('\n')
      .filter((l) => l.startsWith('|'))
      .map((l) =>
        l
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim().replaceAll('`', '')),
      );
    const [header, , ...body] = rows;
    expect(header!.slice(1)).toEqual([...def.events]);
    const documented = Object.fromEntries(
      body.map(([leaf, ...cells]) => [leaf, cells.map((c) => c.replace(/\*$/, ''))]),
    );
    const expected = Object.fromEntries(
      Object.keys(EXPECTED).map((leaf) => [leaf, def.events.map((e) => cell(leaf, e))]),
    );
    expect(documented).toEqual(expected);
  });
});
