import { DefinitionError, StepFailedError } from '../../core/errors.ts';
import { joinStep } from '../../definitions/workflow/constructs/join.ts';
import { isJoin } from '../../definitions/workflow/constructs/scopes.ts';
import { loadGuardRules } from '../../definitions/workflow/guard.ts';
import { pickFields, untrustedData, untrustedFields } from '../../definitions/workflow/input.ts';
import type { ModelProvider } from '../contracts/model-port.ts';
import type { TokenUsage } from '../contracts/step.ts';
import type { ModelDeadline } from '../models/deadline.ts';
import type { WorkflowPlugin } from '../plugin.ts';
import { tryFastPath } from '../steps/fast-path.ts';
import { withGuard } from '../steps/guard.ts';
import { runLlmStep } from '../steps/runner.ts';
import { withToolBackedData } from '../steps/single-prompt.ts';
import { allowListed, withBoundArgs } from '../steps/step-toolbox.ts';
import { NO_USAGE, type StepContext, type StepResult } from '../steps/types.ts';

/**
 * What running one step needs beyond the code-step context: the workflow's code, the model and the untrusted input,
 * only for LLM steps.
 */
export interface RunStepArgs extends Omit<StepContext, 'def'> {
  plugin: WorkflowPlugin;
  /** The step's model: the manifest's, or (a panel step's `models`) the one of that id. */
  model: (modelId?: string) => ModelProvider;
  /** The execution input's untrusted fields as the trigger expands them (an email with its body). */
  untrusted: () => Promise<Record<string, unknown> | undefined>;
  /** LLM steps: a consensus sample's temperature. @default the step's */
  temperature?: number;
  /** Whether the manifest's `fastPaths` run before their LLM steps. @default true */
  fastPaths?: boolean;
  /**
   * The step is the single-prompt agent's (`singlePromptStep`): the state its bound arguments and guard read is what its
   * own tools return as it goes (see `withToolBackedData`). @default false
   */
  singlePrompt?: boolean;
  /** LLM steps: model calls allowed. @default the runner's */
  maxTurns?: number;
  /** LLM steps: the invocation's model budget, from the step's timeout. @default each call has the provider's timeout */
  deadline?: ModelDeadline;
}

/**
 * A panel step (`models`): the step once per model, in order. The first model's decision routes;
 * every model's outputs are kept in `panel` for a later step to combine (a judge panel's verdicts).
 */
async function runPanel(models: readonly string[], run: (modelId: string) => Promise<StepResult>): Promise<StepResult> {
  const results: { model: string; result: StepResult }[] = [];
  for (const model of models) results.push({ model, result: await run(model) });
  const first = results[0]!.result;
  const usage = results.reduce(
    (total, { result }) => {
      for (const key of Object.keys(total) as (keyof TokenUsage)[]) total[key] += result.usage[key];
      return total;
    },
    { ...NO_USAGE },
  );
  return {
    ...first,
    fields: {
      ...first.fields,
      panel: results.map(({ model, result }) => ({ model, next: result.next, fields: result.fields })),
    },
    toolCalls: results.flatMap(({ result }) => result.toolCalls),
    usage,
  };
}

/**
 * Run a step of either kind. Both see only the step's allowed tools, with its bound arguments
 * filled from state; a code step that routes outside its declared edges is a bug and fails
 * permanently, like an invalid model route.
 */
export async function runStep(args: RunStepArgs): Promise<StepResult> {
  const { step, input, tool, plugin } = args;
  // A map or parallel step's own run joins the results its Map or Parallel state left in previous.fields.
  if (isJoin(step)) return { ...joinStep(step, input.previous), toolCalls: [], usage: NO_USAGE };
  const def = plugin.def;
  const scope = { data: { ...input.previous.data }, input: input.input };
  const bound = withBoundArgs(allowListed(args.toolbox, step), step, scope);
  const rules = loadGuardRules(def, step);
  const internalNames = [...def.steps.map((s) => s.name), ...def.manifest.tools];
  // Read before the guard is set up: its quoting check compares the outgoing text with it.
  const untrusted = step.kind === 'llm' && step.readsUntrusted ? await args.untrusted() : undefined;
  // The guard's quoting check also knows what outsiders wrote into the state (an awaited reply).
  const outsiders = untrusted && { ...untrusted, ...pickFields(scope.data, untrustedData(def)) };
  const guarded = rules ? withGuard(bound, { step, rules, internalNames, scope, untrusted: outsiders }) : bound;
  const toolbox = args.singlePrompt ? withToolBackedData(guarded, def, scope.data) : guarded;
  if (step.kind === 'llm') {
    const fastPath = args.fastPaths === false ? undefined : plugin.fastPaths?.[step.name];
    const decided = fastPath && (await tryFastPath(fastPath, { def, step, input, toolbox, tool, untrusted }));
    if (decided) return decided;
    const run = (model: ModelProvider) =>
      runLlmStep({
        def,
        step,
        input,
        untrusted,
        untrustedFields: { input: untrustedFields(def), data: untrustedData(def) },
        model,
        toolbox,
        remainingTimeMs: tool.remainingTimeMs,
        temperature: args.temperature,
        maxTurns: args.maxTurns,
        deadline: args.deadline,
      });
    if (!step.models) return run(args.model());
    return runPanel(step.models, (id) => run(args.model(id)));
  }
  const run = plugin.codeSteps[step.handler!];
  if (!run) throw new DefinitionError(step.file, 'handler', `no code step "${step.handler}" in the workflow's code`);
  const result = await run({ def, step, input, toolbox, tool });
  if (!step.next.includes(result.next))
    throw new StepFailedError(
      `${step.name}: code step "${step.handler}" chose "${result.next}", not a declared edge (${step.next.join(', ')})`,
    );
  return result;
}
