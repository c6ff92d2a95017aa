import type { ToolCallRecord } from 'stepwise';
import { defineCodeStep, NO_USAGE } from 'stepwise';
import { ambiguity, retrieve } from '../pipeline.ts';
import { toolSimilarity } from '../similarity.ts';
import { readTurn } from '../turn.ts';

/**
 * 04: rules by scope and scenario candidates by entry examples, scored against the turn, and the
 * session's memory episodes most like it (for generation). First the
 * ambiguity exit, enforced here whatever route the extraction chose: a message flagged ambiguous,
 * or whose intent confidence is below the agent's `min_intent_confidence`, is not acted on.
 */
export default defineCodeStep(async ({ def, input, toolbox, tool }) => {
  const turn = readTurn(def, input);
  const unclear = ambiguity(turn.context, turn.agent.scenarioFilter.min_intent_confidence);
  if (unclear)
    return {
      next: '03-clarify',
      reason: `Not retrieved: ${unclear} (the extraction routed to retrieval)`,
      decidedBy: 'code',
      fields: {},
      toolCalls: [],
      usage: NO_USAGE,
    };
  const calls: ToolCallRecord[] = [];
  const retrieval = await retrieve(
    turn.agent,
    turn.session,
    turn.message,
    turn.context,
    toolSimilarity(toolbox, tool, calls),
  );
  const top = [...retrieval.scenarios].sort((a, b) => b.score - a.score)[0];
  return {
    next: '05-filter',
    reason: `${retrieval.rules.length} rules in scope; best scenario ${top ? `${top.id} (${top.score})` : 'none'}; ${retrieval.memory.length} earlier episode(s) recalled`,
    decidedBy: 'code',
    fields: { retrieval },
    toolCalls: calls,
    usage: NO_USAGE,
  };
});
