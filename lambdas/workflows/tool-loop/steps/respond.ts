import { defineCodeStep, DONE, NO_USAGE } from 'stepwise';
import { LoopDataSchema } from '../state.ts';

/**
 * The turn's answer (the seed's TurnOutput): the reflection's summary or question. As the fallback
 * (a caught error or an undeclared route) it apologises and says what the group achieved so far,
 * without calling a model: it works when the model is down.
 */
export default defineCodeStep(async ({ input, step }) => {
  const data = LoopDataSchema.partial().parse(input.previous.data);
  const asFallback = input.error !== null || input.previous.next !== step.name;
  const soFar = data.groupSummary ? ` So far: ${data.groupSummary}.` : '';
  const [branch, response] = asFallback
    ? ['failed', `Sorry, I could not finish this request (${input.error?.Error ?? `unexpected route ${input.previous.next}`}).${soFar}`]
    : data.action === 'ask'
      ? ['ask', data.question ?? 'Could you tell me more about what you need?']
      : ['done', data.summary ?? data.groupSummary ?? 'Done.'];
  return { next: DONE, reason: `Answered (${branch})`, decidedBy: 'code', fields: { response, branch }, toolCalls: [], usage: NO_USAGE };
});
