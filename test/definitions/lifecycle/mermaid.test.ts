import { describe, expect, it } from 'vitest';
import { parseLifecycle } from '../../../src/definitions/lifecycle/loader.ts';
import { lifecycleToMermaid } from '../../../src/definitions/lifecycle/mermaid.ts';
import { def } from '../../runtime/lifecycle/support.ts';

const SMALL = `name: small
description: Every kind of transition once.
version: 1.0.0
features:
  goals: true
  followUps: { states: [talking], sent: agent.message_sent, reply: agent.message_sent, exhausted: follow_ups.exhausted }
initial: idle
on:
  crm.state_set: { targetFromDetail: state }
states:
  idle:
    on:
      agent.message_sent: talking
      goal.hit: done
      follow_up.stopped: { actions: [stopFollowUps] }
  active:
    on:
      goal.hit: done
      follow_up.stopped: { actions: [stopFollowUps] }
      deal.closed: closed
    states:
      talking:
        entry: [clearFollowUpStop]
        on:
          follow_ups.exhausted: { target: closed, actions: [stopFollowUps] }
      closed:
        on:
          deal.closed: null
  done:
    terminal: true
    on:
      agent.message_sent: { restart: true }
`;

describe('lifecycleToMermaid', () => {
  it('renders composite states, entry actions, labelled arrows, restarts, terminals and comments', () => {
    const small = parseLifecycle(SMALL, 'small.yaml');
    expect(lifecycleToMermaid(small)).toBe(
      [
        'stateDiagram-v2',
        '    [*] --> idle',
        '    idle',
        '    state active {',
        '        talking : entry / clearFollowUpStop',
        '        closed',
        '    }',
        '    done',
        '    %% every state: crm.state_set --> the leaf named by detail.state',
        '    idle --> talking : agent.message_sent',
        '    idle --> done : goal.hit',
        '    idle --> idle : follow_up.stopped / stopFollowUps',
        '    active --> done : goal.hit',
        '    active --> active : follow_up.stopped / stopFollowUps',
        '    active --> closed : deal.closed',
        '    talking --> closed : follow_ups.exhausted / stopFollowUps',
        '    %% closed: deal.closed is only logged here, whatever its parents do',
        '    done --> idle : agent.message_sent / startConversation',
        '    done --> [*]',
        '',
      ].join('\n'),
    );
  });

  it('nests composite states inside composite states', () => {
    const out = lifecycleToMermaid(def);
    expect(out).toContain(
      [
        '    state active {',
        '        state qualification {',
        '            outreach',
        '            engaged : entry / clearFollowUpStop',
        '            cold',
        '            no_show',
        '        }',
        '        booked',
      ].join('\n'),
    );
    expect(out).toContain('    qualification --> booked : call.booked\n');
    expect(out).toContain('    goal_hit --> idle : member.message_sent / startConversation\n');
    expect(out).toContain('    stopped --> [*]\n');
  });

  it('is deterministic', () => {
    expect(lifecycleToMermaid(def)).toBe(lifecycleToMermaid(def));
  });
});
