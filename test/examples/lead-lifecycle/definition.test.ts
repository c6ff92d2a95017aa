/** The lead lifecycle example's own definition: its leaves, its shipped agents, and the diagram its README shows. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/core/errors.ts';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { listAgentConfigs, loadAgentConfig } from '../../../src/definitions/lifecycle/loader.ts';
import { lifecycleToMermaid } from '../../../src/definitions/lifecycle/mermaid.ts';
import { pathOf } from '../../../src/runtime/lifecycle/transition.ts';
import { def, LEAD } from './support.ts';

describe('the shipped lead lifecycle', () => {
  it('loads, with the issue’s leaves and paths', () => {
    expect(def.name).toBe('lead-lifecycle');
    expect(def.initial).toBe('idle');
    expect(def.leaves).toEqual([
      'idle',
      'outreach',
      'engaged',
      'cold',
      'no_show',
      'opted_out',
      'meeting_booked',
      'meeting_attended',
      'payment_pending',
      'deal_closed',
      'renewal_due',
      'renewal_outreach',
      'renewal_engaged',
      'goal_hit',
      'conversation_stopped',
    ]);
    expect(def.leaves.filter((l) => def.states[l]!.terminal)).toEqual(['goal_hit', 'conversation_stopped']);
    expect(pathOf(def, 'engaged')).toBe('active.lead_qualification.engaged');
    expect(pathOf(def, 'renewal_due')).toBe('active.renewal_due');
    expect(pathOf(def, 'goal_hit')).toBe('goal_hit');
    expect(pathOf(def, 'lead_qualification')).toBe('active.lead_qualification');
    expect(() => pathOf(def, 'nowhere')).toThrow(InvalidInputError);
    expect(def.states.engaged!.entry).toEqual(['clearFollowUpStop']);
  });

  it('ships agent configs that all validate', () => {
    const agents = listAgentConfigs(LEAD);
    expect(agents).toEqual([
      'attend-meeting',
      'book-meeting',
      'book-or-close',
      'click-and-book',
      'close-large-deal',
      'hand-off-cold',
      'nurture',
    ]);
    for (const agent of agents) expect(() => loadAgentConfig(agent, LEAD)).not.toThrow();
    expect(loadAgentConfig('close-large-deal', LEAD).goal).toEqual({
      event: 'deal.closed',
      where: { value: { gte: 10000 } },
    });
  });

  it('the shipped hand-off-cold agent declares that stop (cold, no Sparky)', () => {
    expect(loadAgentConfig('hand-off-cold', LEAD).stopConversationOn).toEqual([{ state: 'cold', sparky: false }]);
  });

  it('is the diagram the README shows', () => {
    const readme = readFileSync(join(STATEMACHINES_DIR, LEAD, 'README.md'), 'utf8');
    expect(readme).toContain('```mermaid\n' + lifecycleToMermaid(def) + '```');
  });
});
