/** What the Lambda of a map or parallel step runs: the join of what its Map or Parallel state left in the state. */
import type { StepDefinition } from '../schema.ts';
import { type JoinResult, joinItems } from './map.ts';
import { joinBranches } from './parallel.ts';

/**
 * Join the items (a map step: `previous.fields.<output>`) or branches (a parallel step: `previous.fields` by branch)
 * that the step's states left in its previous result.
 * @throws ItemsFailedError or BranchFailedError, which the step's failure route catches.
 */
export function joinStep(
  step: StepDefinition,
  previous: { fields: Record<string, unknown>; count: number },
): JoinResult {
  return step.map
    ? joinItems(step, previous.fields[step.map.output], previous.count)
    : joinBranches(step, previous.fields, previous.count);
}
