import type { StoredEmail } from '../triggers/email/store.ts';
import { DefinitionError, StepFailedError } from '../lib/errors.ts';
import type { StepDefinition } from '../lib/workflow/schema.ts';
import type { ModelProvider } from '../models/port.ts';
import { allowListed } from './allow-list.ts';
import { checkWarranty } from '../workflows/warranty-email/steps/check-warranty.ts';
import { outOfScope } from '../workflows/warranty-email/steps/out-of-scope.ts';
import { runLlmStep } from './runner.ts';
import type { CodeStep, StepContext, StepResult } from './types.ts';

/** Code steps by the frontmatter `handler` name. Static imports: the bundler sees every module. */
export const CODE_STEPS: Readonly<Record<string, CodeStep>> = {
  'check-warranty': checkWarranty,
  'out-of-scope': outOfScope,
};

export function codeStep(step: StepDefinition): CodeStep {
  const run = step.handler ? CODE_STEPS[step.handler] : undefined;
  if (!run) throw new DefinitionError(step.file, 'handler', `no code step "${step.handler}" (known: ${Object.keys(CODE_STEPS).join(', ')})`);
  return run;
}

/** What running one step needs beyond the code-step context: the model, and the email body, only for LLM steps. */
export interface RunStepArgs extends StepContext {
  model: () => ModelProvider;
  body: () => Promise<StoredEmail>;
}

/**
 * Run a step of either kind. Both see only the step's allowed tools; a code step that routes
 * outside its declared edges is a bug and fails permanently, like an invalid model route.
 */
export async function runStep(args: RunStepArgs): Promise<StepResult> {
  const { step, def, input, tool } = args;
  if (step.kind === 'llm')
    return runLlmStep({ def, step, input, email: await args.body(), model: args.model(), toolbox: args.toolbox, remainingTimeMs: tool.remainingTimeMs });
  const result = await codeStep(step)({ ...args, toolbox: allowListed(args.toolbox, step) });
  if (!step.next.includes(result.next))
    throw new StepFailedError(`${step.name}: code step "${step.handler}" chose "${result.next}", not a declared edge (${step.next.join(', ')})`);
  return result;
}
