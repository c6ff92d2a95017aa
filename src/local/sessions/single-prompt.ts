/**
 * The workflow's single-prompt agent run outside its state machine (`singlePromptStep`: the whole
 * workflow as one LLM step, every tool, behind the steps' bound arguments and output guard): one
 * path for `stepwise eval --mode single-prompt` (over each case's mocked tools) and `stepwise run
 * --mode single-prompt` (over the session's tools: DynamoDB Local, the outbox).
 */
import { InvalidInputError } from '../../core/errors.ts';
import { untrustedFields } from '../../definitions/workflow/input.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { ModelProvider } from '../../runtime/contracts/model-port.ts';
import type { StepInput } from '../../runtime/contracts/step.ts';
import { BedrockModel } from '../../runtime/models/bedrock.ts';
import { OpenAiModel } from '../../runtime/models/openai.ts';
import type { WorkflowPlugin } from '../../runtime/plugin.ts';
import { runStep } from '../../runtime/step-handler/run-step.ts';
import { singlePromptStep } from '../../runtime/steps/single-prompt.ts';
import { type StepResult, toolContext } from '../../runtime/steps/types.ts';
import type { Toolbox } from '../../runtime/tools/types.ts';
import type { ModelChoice, OpenAiEndpoint } from './model-choice.ts';

/** Model calls one run of the single-prompt agent may make: one per tool round trip of the longest flow, and some. */
export const SINGLE_PROMPT_MAX_TURNS = 10;

/** How a local session runs each input: the state machine (`steps`), or the single-prompt agent (`single-prompt`). */
export const RUN_MODES = ['steps', 'single-prompt'] as const;
/** The single-prompt agent's mode by the name it had before 0.3, still accepted. */
export const RUN_MODE_ALIASES = { monolithic: 'single-prompt' } as const;
export type RunMode = (typeof RUN_MODES)[number] | keyof typeof RUN_MODE_ALIASES;

/** Whether a session in `mode` runs the single-prompt agent. */
export const runsSinglePrompt = (mode: RunMode | undefined): boolean => mode !== undefined && mode !== 'steps';

/** One run of the agent: its execution input, what the step sees as untrusted, its tools and model. */
export interface SinglePromptRun {
  plugin: WorkflowPlugin;
  input: Record<string, unknown>;
  untrusted: Record<string, unknown> | undefined;
  toolbox: Toolbox;
  model: ModelProvider;
  /** Tool calls and sent mail are keyed by it, as by a state machine's execution. */
  execution: { id: string; name: string };
}

const NEEDS_A_MODEL =
  '--mode single-prompt needs a model (--model bedrock or openai): the offline stand-in has rules per step, none for one call with the whole instruction set';

/**
 * The agent's model for a local `--model` choice.
 * @throws InvalidInputError for `offline`: the offline stand-in has rules per step, none for the whole set.
 */
export function singlePromptModel(
  def: WorkflowDefinition,
  choice: ModelChoice,
  options: { openai?: OpenAiEndpoint; modelId?: string },
): ModelProvider {
  const maxTokens = def.manifest.model.maxTokens;
  if (choice === 'openai' && options.openai)
    return new OpenAiModel({
      ...options.openai,
      maxTokens,
      apiKey: options.openai.apiKey ?? process.env.OPENAI_API_KEY,
    });
  if (choice === 'bedrock')
    return new BedrockModel({
      modelId: options.modelId ?? def.manifest.model.id,
      maxTokens,
      region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION,
    });
  throw new InvalidInputError(NEEDS_A_MODEL);
}

/**
 * The agent needs a model.
 * @throws InvalidInputError for the offline stand-in: it has rules per step, none for the whole set.
 */
export function assertAgentModel(model: ModelProvider): void {
  if (model.name === 'offline') throw new InvalidInputError(NEEDS_A_MODEL);
}

/** What a JSON-input workflow's step reads as untrusted: the manifest's untrusted fields of the input. */
export function untrustedOfInput(
  def: WorkflowDefinition,
  input: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const fields = untrustedFields(def).filter((f) => Object.hasOwn(input, f));
  return fields.length ? Object.fromEntries(fields.map((f) => [f, input[f]])) : undefined;
}

/**
 * Run the agent once, as the single-prompt state machine's one Task would (its step input), on the
 * step handler's own path: bound arguments, the output guard, tool-backed state. Fast paths do not apply.
 * @throws what the step throws (a model error, a refused route, an unbundled dependency).
 */
export function runSinglePrompt(run: SinglePromptRun): Promise<StepResult> {
  const { plugin, input, untrusted, toolbox, model, execution } = run;
  assertAgentModel(model);
  const step = singlePromptStep(plugin.def);
  const stepInput: StepInput = {
    workflow: plugin.def.manifest.name,
    step: step.name,
    input,
    previous: { step: null, next: step.name, reason: 'start', decidedBy: null, fields: {}, data: {}, count: 0 },
    error: null,
    count: 1,
    execution,
  };
  return runStep({
    plugin,
    step,
    input: stepInput,
    toolbox,
    tool: toolContext(stepInput),
    model: () => model,
    untrusted: async () => untrusted,
    fastPaths: false,
    singlePrompt: true,
    maxTurns: SINGLE_PROMPT_MAX_TURNS,
  });
}
