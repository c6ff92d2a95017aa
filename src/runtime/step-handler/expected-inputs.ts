import type { Logger } from '@aws-lambda-powertools/logger';
import { lookup } from '../../core/template.ts';
import type { StepDefinition } from '../../definitions/workflow/schema.ts';
import type { StepInput } from '../contracts/step.ts';

/** What the check reads of a prepared step. */
interface Expecting {
  step: Pick<StepDefinition, 'expects'>;
  input: Pick<StepInput, 'input' | 'previous'>;
  keys: Record<string, unknown>;
}

/**
 * The step's `expects` paths that the state does not hold, each logged at WARN: the step runs
 * anyway (it decides what to do without the value), but the log says why it took that route. An
 * offloaded value is a pointer in the state, so it counts as present.
 */
export function warnMissingInputs({ step, input, keys }: Expecting, logger: Pick<Logger, 'warn'>): string[] {
  const scope = { data: input.previous.data, input: input.input };
  const missing = step.expects.filter((path) => {
    const value = lookup(scope, path);
    return value === undefined || value === null || value === '';
  });
  for (const path of missing) logger.warn(`Step input missing: ${path}`, { ...keys, path });
  return missing;
}
