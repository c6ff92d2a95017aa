import { DONE, defineCodeStep, NO_USAGE, type ToolCallRecord } from 'stepwise';
import { LoopDataSchema, maxIterations, type PreviousResponse, stateSummary } from '../state.ts';

/**
 * The turn's answer (`response`, `stateSummary`, `branch`): the reflection's
 * summary or question; at the iteration cap (the counter's outcome passes `$.error` to this step)
 * the partial summary of what the group found; as the fallback (a caught error or an undeclared
 * route) an apology with what the group achieved so far. Works without a model. With a
 * `sessionId`, the output is kept as the session's `previousResponse` for the next turn.
 */
export default defineCodeStep(async ({ def, input, step, toolbox, tool }) => {
  const data = LoopDataSchema.partial().parse(input.previous.data);
  const limit = Object.values(def.manifest.counters).find(
    (c) => c.then === step.name && c.outcome === input.error?.Error,
  );
  const asFallback = !limit && (input.error !== null || input.previous.next !== step.name);
  const soFar = data.groupSummary ? ` So far: ${data.groupSummary}.` : '';
  const [branch, response] = limit
    ? [
        'limit',
        `I stopped after ${limit.max} tool runs without finishing.${data.groupSummary ? ` What I found so far: ${data.groupSummary}.` : ' Nothing useful came back yet.'}`,
      ]
    : asFallback
      ? [
          'failed',
          `Sorry, I could not finish this request (${input.error?.Error ?? `unexpected route ${input.previous.next}`}).${soFar}`,
        ]
      : data.action === 'ask'
        ? ['ask', data.question ?? 'Could you tell me more about what you need?']
        : ['done', data.summary ?? data.groupSummary ?? 'Done.'];
  const summary = stateSummary(data, input.counters?.iteration, maxIterations(def));
  const calls: ToolCallRecord[] = [];
  if (typeof input.input.sessionId === 'string') {
    const previous: PreviousResponse = {
      ...(data.groupId && { groupId: data.groupId }),
      ...(data.turnId && { turnId: data.turnId }),
      branch: branch as PreviousResponse['branch'],
      ...(data.originalQuery && { originalQuery: data.originalQuery }),
      reminders: data.reminders ?? [],
      response,
      stateSummary: summary,
    };
    // The answer goes out even when the session cannot keep it: the next turn then starts without it (recorded here).
    calls.push(await toolbox.execute('turn_memory', { op: 'write', previous }, tool));
  }
  return {
    next: DONE,
    reason: `Answered (${branch})`,
    decidedBy: 'code',
    fields: { response, stateSummary: summary, branch },
    toolCalls: calls,
    usage: NO_USAGE,
  };
});
