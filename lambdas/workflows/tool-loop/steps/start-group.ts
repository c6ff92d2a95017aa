import { defineCodeStep, NO_USAGE } from 'stepwise';
import { maxIterations, type PreviousResponse, TurnInputSchema } from '../state.ts';

/**
 * A turn (one user query) starts a new iteration group: entering this step resets the `iteration`
 * counter (manifest `counters`). The original query is kept apart from the remaining query that
 * `04-reflect` rewrites; an answer to the previous turn's question is read together with the
 * query it clarifies; reminders of the session carry forward. The working state starts at
 * iteration 1 of the group, with no current tool.
 */
export default defineCodeStep(async ({ def, input, toolbox, tool }) => {
  const turn = TurnInputSchema.parse(input.input);
  // The session keeps the previous turn's output itself; one the caller passes takes precedence.
  const read =
    turn.previousResponse === undefined && turn.sessionId !== undefined
      ? await toolbox.execute('turn_memory', { op: 'read' }, tool)
      : undefined;
  const previous = turn.previousResponse ?? (read?.result as { previous?: PreviousResponse } | undefined)?.previous;
  const turnId = turn.turnId ?? input.execution.name;
  const answersQuestion = previous?.branch === 'ask' && previous.originalQuery !== undefined;
  const originalQuery = answersQuestion ? `${previous!.originalQuery} (clarified: ${turn.query})` : turn.query;
  return {
    next: '02-select-tool',
    reason: answersQuestion ? 'New group: the answer to a clarification question' : 'New group for a new query',
    decidedBy: 'code',
    fields: {
      turnId,
      groupId: `${turn.sessionId ?? 'session'}/${turnId}`,
      inputSource: turn.inputSource,
      iteration: 1,
      maxIterations: maxIterations(def),
      originalQuery,
      remainingQuery: turn.query,
      groupToolResults: [],
      reminders: previous?.reminders ?? [],
    },
    toolCalls: read ? [read] : [],
    usage: NO_USAGE,
  };
});
