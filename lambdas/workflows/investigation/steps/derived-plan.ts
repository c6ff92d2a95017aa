import { defineFastPath } from 'stepwise';
import { InvestigationInput } from '../rules.ts';

/** `00-propose-plan`'s fast path: countable work (models to consult, files to document) needs no planner. */
export default defineFastPath(({ input }) => {
  const request = InvestigationInput.parse(input.input);
  const items = request.consult?.length ?? (request.document ? request.document.length + 1 : 0);
  if (!items) return null;
  return {
    next: '01-plan',
    reason: `countable work: ${items} steps, one per item`,
    fields: { proposed_total_steps: items },
  };
});
