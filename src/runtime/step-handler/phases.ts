/**
 * The phases of one step invocation, in the order the handler runs them: prepare (the input, the
 * workflow, the step and its toolbox), run (the step, or its consensus phase), check (the outputs
 * tools back, the tools the step requires), record (the output, within the state budget, in the
 * event log) and report (metrics and log lines).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { InvalidInputError, StepFailedError, ToolUnavailableError } from '../../core/errors.ts';
import { consensusPlan } from '../../definitions/workflow/consensus.ts';
import { checkInput, isEmailWorkflow, pickFields, untrustedFields } from '../../definitions/workflow/input.ts';
import { getStep } from '../../definitions/workflow/loader.ts';
import { DONE, type StepDefinition, type WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { StepInput, StepOutput, ToolCallRecord } from '../contracts/step.ts';
import { fieldLabel } from '../contracts/text-protocol.ts';
import { type EventLog, stepCompletedEvent } from '../event-log.ts';
import { invocationBudgetMs, ModelDeadline } from '../models/deadline.ts';
import type { Observability } from '../observability.ts';
import { offloadLargeFields, payloadBytes, resolveOffloaded, type ValueStore } from '../offload.ts';
import { loadPlugin, type WorkflowPlugin } from '../plugin.ts';
import { type ConsensusSummary, consensusPhase } from '../steps/consensus.ts';
import { SINGLE_PROMPT_STEP, singlePromptStep } from '../steps/single-prompt.ts';
import { withToolOutputs } from '../steps/tool-outputs.ts';
import { type StepResult, toolContext } from '../steps/types.ts';
import { isTransient } from '../tools/aws-errors.ts';
import { loggableArgs, type Toolbox } from '../tools/types.ts';
import { emailUntrusted } from '../triggers/email/context.ts';
import type { EmailStore } from '../triggers/email/store.ts';
import { runStep } from './run-step.ts';
import { type ParsedStepInput, parse, type StepEnv, StepInputSchema } from './step-input.ts';
import type { StepModel } from './step-model.ts';

/**
 * What the phases use: the handler's observability, clock and settings, and its adapters, each
 * created on first use (creating the handler does no I/O).
 */
export interface StepAdapters extends Pick<Observability, 'logger' | 'metrics' | 'countBy'> {
  /** The function's environment, checked on first use. */
  config: () => StepEnv;
  clock: () => Date;
  /** The state-size guard's budget for a step's returned payload. */
  stateBudgetBytes: number;
  model: StepModel;
  /** The workflow's toolbox, one per workflow. */
  toolbox: (plugin: WorkflowPlugin) => Toolbox;
  emails: () => Pick<EmailStore, 'get'>;
  eventLog: () => EventLog;
  valueStore: () => ValueStore;
}

/** The step one invocation runs, as {@link prepareStep} found it. */
export interface PreparedStep {
  input: ParsedStepInput;
  plugin: WorkflowPlugin;
  def: WorkflowDefinition;
  step: StepDefinition;
  toolbox: Toolbox;
  /** The step is the single-prompt agent's whole workflow (see `RunStepArgs.singlePrompt`). */
  singlePrompt: boolean;
  /** What every log line of the invocation carries. */
  keys: { execution: string; step: string; count: number };
}

/** What running a step gives: a consensus sample's or tally's reply to the Map, or the step's result. */
export type StepRun = { reply: StepOutput } | { ran: StepResult; consensus?: ConsensusSummary };

/**
 * Prepare: check the input (its shape, the function's workflow and step, the workflow's input
 * schema), load the workflow and pick the step and its toolbox.
 * @throws InvalidInputError for an input this function must not run.
 */
export async function prepareStep(event: unknown, adapters: StepAdapters): Promise<PreparedStep> {
  const input = parse(StepInputSchema, event, 'step input') satisfies StepInput;
  const { WORKFLOW, STEP, STATEMACHINES_DIR } = adapters.config();
  if ((WORKFLOW && WORKFLOW !== input.workflow) || (STEP && STEP !== input.step))
    throw new InvalidInputError(`this function runs ${WORKFLOW}/${STEP}, not ${input.workflow}/${input.step}`);
  const plugin = await loadPlugin(input.workflow, STATEMACHINES_DIR);
  const def = plugin.def;
  const checked = checkInput(def, input.input);
  if (checked.problem)
    throw new InvalidInputError(`step input: input.${checked.problem} (the ${def.manifest.name} input schema)`);
  // The single-prompt agent (manifest `singlePrompt`) runs the whole workflow as this one step.
  const singlePrompt = input.step === SINGLE_PROMPT_STEP && def.manifest.singlePrompt;
  const step = singlePrompt ? singlePromptStep(def) : getStep(def, input.step);
  const keys = { execution: input.execution.name, step: step.name, count: input.count };
  return { input, plugin, def, step, toolbox: adapters.toolbox(plugin), singlePrompt, keys };
}

/**
 * Run: the step, on the values earlier steps offloaded read back (the state-size guard: the step
 * sees values, never pointers), or the consensus phase of a consensus step.
 */
export async function runPrepared(
  prepared: PreparedStep,
  adapters: StepAdapters,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<StepRun> {
  const { plugin, def, step, input, toolbox, singlePrompt } = prepared;
  const resolve = (state: Record<string, unknown>) =>
    storage('offloaded values', () => resolveOffloaded(state, adapters.valueStore, input.execution.name));
  const previous = {
    ...input.previous,
    fields: await resolve(input.previous.fields),
    data: await resolve(input.previous.data),
  };
  const resolved = { ...input, previous };

  const deadline = context && stepDeadline(prepared, context.getRemainingTimeInMillis());
  const run = (temperature?: number) =>
    runStep({
      plugin,
      step,
      input: resolved,
      toolbox,
      tool: toolContext(input, context && (() => context.getRemainingTimeInMillis())),
      model: (modelId) => adapters.model(def, modelId),
      fastPaths: adapters.config().FAST_PATHS === 'on',
      untrusted: () => untrustedInput(def, input.input, adapters),
      temperature,
      singlePrompt,
      deadline,
    });
  // A consensus sample or a tally between waves answers the Map directly: only the vote is the step's result.
  const phase = await consensusPhase(def, step, resolved, run);
  if (phase && 'reply' in phase) return { reply: phase.reply as StepOutput };
  return phase ? { ran: phase.result, consensus: phase.summary } : { ran: await run() };
}

/**
 * The model budget of this invocation: the step's timeout (the Lambda's time left as it starts)
 * shared by every attempt the ASL may make and, for a consensus sample, by every wave, so that
 * samples × attempts never outlive one step timeout (see `invocationBudgetMs`).
 */
function stepDeadline({ def, step, input }: PreparedStep, timeoutMs: number): ModelDeadline {
  const rounds = input.sample && step.consensus ? consensusPlan(step.consensus).length : 1;
  const attempts = 1 + def.manifest.retry.maxAttempts;
  return new ModelDeadline(invocationBudgetMs({ timeoutMs, attempts, rounds }));
}

/** The execution input's untrusted fields; an email workflow's email with its body, from the email store. */
async function untrustedInput(
  def: WorkflowDefinition,
  input: Record<string, unknown>,
  adapters: StepAdapters,
): Promise<Record<string, unknown> | undefined> {
  if (!isEmailWorkflow(def)) return pick(input, untrustedFields(def));
  const emails = adapters.emails();
  return storage('email store', () => emailUntrusted(input, emails));
}

/**
 * Check: tool-backed outputs (`from`) replace whatever the model reported, each replacement logged
 * (a replaced value may be a guess or an injection); every tool the step `requires` succeeded.
 * @throws StepFailedError when the step chose its route without a successful call of a required tool.
 */
export function checkResult({ step, keys }: PreparedStep, ran: StepResult, logger: Logger): StepResult {
  const { result, overrides } = withToolOutputs(step, ran);
  for (const { field, from, reported, kept } of overrides) {
    const personal = step.outputs[field]!.pii;
    logger.warn(`Step output ${field} replaced by ${from}: the reported value differs from the tool's`, {
      ...keys,
      field,
      from,
      reported: personal ? '<pii>' : show(reported),
      kept: kept === undefined ? '(no successful call: removed)' : personal ? '<pii>' : show(kept),
    });
  }

  const missing = step.requires.filter((t) => !result.toolCalls.some((c) => c.tool === t && c.error === undefined));
  if (missing.length) {
    const without = `without a successful ${missing.join(', ')} call`;
    throw new StepFailedError(`${step.name}: chose ${result.next} ${without} (${result.reason})`);
  }
  return result;
}

/**
 * Record: the step's output, its large new values offloaded to the value store (the state-size
 * guard), appended to the event log as a `StepCompleted` event.
 */
export async function recordStep(
  prepared: PreparedStep,
  result: StepResult,
  consensus: ConsensusSummary | undefined,
  started: Date,
  adapters: StepAdapters,
): Promise<StepOutput> {
  const { input, plugin, def, step, keys } = prepared;
  const full = stepOutput(prepared, result, consensus, {
    durationMs: adapters.clock().getTime() - started.getTime(),
    modelId: adapters.config().MODEL_ID ?? def.manifest.model.id,
  });
  // `data` keeps earlier pointers (input.previous.data), and large new values become pointers. The transcript is
  // bounded on its own (TRANSCRIPT_MAX_BYTES) and never enters the state, so it does not count here.
  const measure = ({ transcript: _, ...o }: StepOutput) => payloadBytes(returnedOutput(o, plugin, adapters.config()));
  const { output, moved } = await storage('offloaded values', () =>
    offloadLargeFields(full, adapters.valueStore, input.execution.name, adapters.stateBudgetBytes, measure),
  );
  if (moved.length)
    adapters.logger.info(`Step output values offloaded (state-size guard): ${moved.join(', ')}`, { ...keys, moved });
  const event = stepCompletedEvent(output, {
    executionName: input.execution.name,
    at: adapters.clock(),
    outputs: step.outputs,
    loggableArgs: (tool, args) => (plugin.tools[tool] ? loggableArgs(plugin.tools[tool], args) : {}),
    ...(isEmailWorkflow(def) && { from: (input.input.email as { from: string }).from }),
    ...(input.item && { item: `${input.item.map}#${input.item.index}` }),
  });
  await storage('event log', () => adapters.eventLog().append(event));
  return output;
}

/** The step's full output, before the state-size guard. */
function stepOutput(
  { input, step }: PreparedStep,
  result: StepResult,
  consensus: ConsensusSummary | undefined,
  { durationMs, modelId }: { durationMs: number; modelId: string },
): StepOutput {
  return {
    step: step.name,
    next: result.next,
    reason: result.reason,
    decidedBy: result.decidedBy,
    fields: result.fields,
    data: { ...input.previous.data, ...result.fields },
    // A join counts the steps of its longest item or branch for the circuit breaker.
    count: input.count + (result.innerSteps ?? 0),
    ...(result.reply === undefined ? {} : { reply: result.reply }),
    toolCalls: result.toolCalls,
    usage: result.usage,
    durationMs,
    // The provider names the model it called; otherwise (the offline stand-in) the one it stands in for.
    ...(result.transcript && { transcript: { modelId, ...result.transcript } }),
    ...(consensus && { consensus }),
  };
}

/** The output the state machine keeps: with `STEP_OUTPUT=summary`, without personal data. */
export function returnedOutput(output: StepOutput, plugin: WorkflowPlugin, config: StepEnv): StepOutput {
  return config.STEP_OUTPUT === 'summary' ? summarized(output, plugin) : output;
}

/**
 * The output without personal data, for environments whose execution history must not hold it:
 * tool calls keep their name, loggable arguments and outcome; the reply text and tool results stay
 * in the event log, and the model transcript (which quotes the untrusted input) is left out. The
 * state (`fields`, `data`) is unchanged: later steps need it.
 */
function summarized(output: StepOutput, plugin: WorkflowPlugin): StepOutput {
  const { reply: _reply, transcript: _transcript, ...rest } = output;
  return {
    ...rest,
    toolCalls: output.toolCalls.map((call) => ({
      tool: call.tool,
      args: plugin.tools[call.tool] ? loggableArgs(plugin.tools[call.tool], call.args) : {},
      ...(call.error !== undefined ? { error: call.error } : { result: { summarized: true } }),
    })),
  };
}

/** Report: the step's metrics, its log lines and, when the workflow ends, the list of its steps. */
export async function reportStep(
  prepared: PreparedStep,
  result: StepResult,
  output: StepOutput,
  adapters: StepAdapters,
): Promise<void> {
  const notCompleted = result.toolCalls.filter((c) => c.error !== undefined);
  addStepMetrics(prepared, result, output, notCompleted, adapters);
  logStep(prepared, result, output, notCompleted, adapters.logger);
  if (result.next === DONE) await logStepList(prepared, adapters);
}

/**
 * The step's metrics (dimensions `workflow` and `step`); names from the loaded workflow only: no
 * execution, email or customer value becomes a dimension.
 */
function addStepMetrics(
  { input, def, step }: PreparedStep,
  result: StepResult,
  output: StepOutput,
  notCompleted: ToolCallRecord[],
  { metrics, countBy }: StepAdapters,
): void {
  metrics.addDimensions({ workflow: def.manifest.name, step: step.name });
  metrics.addMetric('StepCompleted', MetricUnit.Count, 1);
  metrics.addMetric('StepDurationMs', MetricUnit.Milliseconds, output.durationMs);
  metrics.addMetric('ModelCalls', MetricUnit.Count, output.usage.modelCalls);
  metrics.addMetric('ModelInputTokens', MetricUnit.Count, output.usage.inputTokens);
  metrics.addMetric('ModelOutputTokens', MetricUnit.Count, output.usage.outputTokens);
  metrics.addMetric('ModelCacheReadTokens', MetricUnit.Count, output.usage.cacheReadInputTokens);
  metrics.addMetric('ModelCacheWriteTokens', MetricUnit.Count, output.usage.cacheWriteInputTokens);
  metrics.addMetric('ToolCallRefused', MetricUnit.Count, notCompleted.length);
  // Outputs declared with `metric` (the intent of a turn): counted by value, the value bounded by the declared list.
  for (const [name, field] of Object.entries(step.outputs)) {
    if (!field.metric || typeof result.fields[name] !== 'string') continue;
    const value = result.fields[name] as string;
    const counted = field.metric.values.includes(value) ? value : 'other';
    countBy(field.metric.name, { workflow: def.manifest.name, step: step.name, value: counted });
  }
  // Reached through a Catch or the Choice Default, or reporting `handoff: true` (a step before it could not finish):
  // the case goes to a person and the execution still succeeds.
  if (step.name === def.manifest.fallback) {
    const handedOff = input.error !== null || input.previous.next !== step.name || result.fields.handoff === true;
    metrics.addMetric('FallbackHandoff', MetricUnit.Count, handedOff ? 1 : 0);
  }
}

/** The step's log lines: its tool calls that did not complete, timing, output (customer data at DEBUG), transition. */
function logStep(
  { step, keys }: PreparedStep,
  result: StepResult,
  output: StepOutput,
  notCompleted: ToolCallRecord[],
  logger: Logger,
): void {
  for (const call of notCompleted)
    logger.warn(`Tool call not completed: ${call.tool}`, { ...keys, tool: call.tool, error: call.error });
  const { durationMs, decidedBy, usage } = output;
  logger.info(`Step completed: ${step.name} (${durationMs}ms)`, { ...keys, durationMs, decidedBy, usage });
  logger.info(`Step output: ${outputSummary(step, result)}`, keys);
  const { fields, reply, toolCalls } = result;
  logger.debug('Step output (customer data)', { ...keys, fields, reply, toolCalls });
  logger.info(`Step transition: ${step.name} → ${result.next} (reason: ${result.reason})`, {
    ...keys,
    from_step: step.name,
    to_step: result.next,
    reason: result.reason,
  });
}

/**
 * The workflow's step list, once it is done. It is a log line: failing to read it must not fail a
 * step whose work is done (the reply is sent).
 */
async function logStepList({ input, keys }: PreparedStep, { eventLog, logger }: StepAdapters): Promise<void> {
  await eventLog()
    .list(input.execution.name)
    .then((events) => {
      const steps = events.flatMap((e) => (e.type === 'StepCompleted' ? [e.step] : []));
      logger.info(`Workflow complete: ${steps.length} steps executed: [${steps.join(', ')}]`, { ...keys, steps });
    })
    .catch((e: Error) =>
      logger.warn('Could not read the event log for the final summary', { ...keys, error: `${e.name}: ${e.message}` }),
    );
}

/** The step output summary: fields marked `pii` (or undeclared) are only named, their values go to DEBUG. */
function outputSummary(step: StepDefinition, result: StepResult): string {
  const parts = [`NEXT_STEP=${result.next}`];
  for (const [name, value] of Object.entries(result.fields)) {
    const personal = step.outputs[name]?.pii ?? true;
    parts.push(`${fieldLabel(name)}=${personal ? '<pii>' : show(value)}`);
  }
  return parts.join(', ');
}

/** Storage outages are worth the ASL Retry (the step re-runs; its tools are idempotent), anything else is a bug. */
async function storage<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (isTransient(e))
      throw new ToolUnavailableError(`${what}: ${(e as Error).name}: ${(e as Error).message}`, { cause: e });
    throw e;
  }
}

const pick = (input: Record<string, unknown>, fields: readonly string[]) =>
  fields.length ? pickFields(input, fields) : undefined;

/** A value as a log line shows it: at most 120 characters. */
const show = (value: unknown) => {
  // JSON.stringify(undefined) is undefined: a declared output left undefined still logs.
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
};
