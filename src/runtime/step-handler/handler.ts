/**
 * The one Lambda entry every workflow step uses (LLM and code steps alike). It validates the
 * `StepInput` the compiled Task state sends, runs the step named in it, sets the outputs declared
 * with `from` from the step's tool results, and returns the `StepOutput` the ASL keeps at
 * `$.result`; it records a `StepCompleted` event, logs the step (AC8: transition, timing, output
 * summary, and the step list when the workflow ends) and emits its
 * metrics (dimensions `workflow` and `step`): `StepCompleted`, `StepDurationMs`, the model's token
 * usage (`ModelInputTokens`, `ModelOutputTokens`, `ModelCacheReadTokens`, `ModelCacheWriteTokens`)
 * and `ToolCallRefused`, the tool calls that did not complete (refused or failed); and, on a line
 * of its own, `ModelThrottled` (dimension `workflow`) for every model call the provider throttled.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import * as z from 'zod';
import { emailUntrusted } from '../triggers/email/context.ts';
import { dynamoEmailStore, type EmailStore } from '../triggers/email/store.ts';
import { type StepInput, type StepOutput } from '../contracts.ts';
import { type Env } from '../../core/env.ts';
import { DONE } from '../../definitions/workflow/schema.ts';
import { InvalidInputError, ModelThrottledError, StepFailedError, ToolUnavailableError } from '../../core/errors.ts';
import { dynamoEventLog, stepCompletedEvent, type EventLog } from '../event-log.ts';
import { observability, type ClientTracer } from '../observability.ts';
import { dynamoValueStore, offloadLargeFields, payloadBytes, resolveOffloaded, STATE_BUDGET_BYTES, type ValueStore } from '../offload.ts';
import { checkInput, isEmailWorkflow, untrustedFields } from '../../definitions/workflow/input.ts';
import { getStep } from '../../definitions/workflow/loader.ts';
import { loadPlugin, type WorkflowPlugin } from '../plugin.ts';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { BedrockModel } from '../models/bedrock.ts';
import { MONOLITHIC_STEP, monolithicStep } from '../steps/single-prompt.ts';
import { OpenAiModel } from '../models/openai.ts';
import { OfflineModel } from '../offline-model.ts';
import type { ModelProvider } from '../models/port.ts';
import { consensusPhase, ConsensusInputShape } from '../steps/consensus.ts';
import { runStep } from './run-step.ts';
import { fieldLabel } from '../steps/text-protocol.ts';
import { withToolOutputs } from '../steps/tool-outputs.ts';
import { toolContext, type StepResult } from '../steps/types.ts';
import { isTransient } from '../tools/aws-errors.ts';
import { createToolbox } from '../tools/toolbox.ts';
import { loggableArgs, type Toolbox } from '../tools/types.ts';

/** Adapters the local runtime or a test passes instead of the ones built from the environment. */
export interface StepServices {
  /** @default by `MODEL_PROVIDER`: `bedrock` (MODEL_ID), `openai` (OPENAI_BASE_URL, OPENAI_MODEL) or `offline` (the workflow's offline-model.yaml) */
  model?: ModelProvider;
  /** Wraps the provider the environment selects (`stepwise eval --record` keeps every call). @default none */
  wrapModel?: (model: ModelProvider, def: WorkflowDefinition) => ModelProvider;
  /** @default the workflow's tools over the AWS/local adapters the environment describes */
  toolbox?: Toolbox;
  /** Wraps the toolbox built from the environment (a fork pins some tools' results; the others run as usual). @default none */
  wrapToolbox?: (toolbox: Toolbox) => Toolbox;
  /** Email workflows: where the bodies are. @default DynamoDB `EMAILS_TABLE` */
  emails?: Pick<EmailStore, 'get'>;
  /** @default DynamoDB `EVENTS_TABLE` */
  events?: EventLog;
  /** Where output values past the state budget go. @default DynamoDB `EVENTS_TABLE` (under the execution) */
  values?: ValueStore;
  /** The state-size guard's budget for a step's returned payload. @default STATE_BUDGET_BYTES (64 KiB) */
  stateBudgetBytes?: number;
  /** @default () => new Date() */
  clock?: () => Date;
  logger?: Logger;
}

const StepName = z.string().min(1);
const Fields = z.record(z.string(), z.unknown());

/** The payload of the compiled Task state (see src/runtime/contracts.ts). */
export const StepInputSchema = z.object({
  workflow: StepName,
  step: StepName,
  /** Checked against the workflow's own input schema once the workflow is known. */
  input: z.record(z.string(), z.unknown()),
  previous: z.object({
    step: z.string().nullable(),
    next: z.string(),
    reason: z.string(),
    decidedBy: z.enum(['model', 'model-text', 'code', 'offline']).nullable(),
    fields: Fields,
    data: Fields,
    count: z.number().int().nonnegative(),
  }),
  error: z.object({ Error: z.string(), Cause: z.string().default('') }).nullable(),
  count: z.number().int().positive(),
  execution: z.object({ id: z.string().min(1), name: z.string().min(1) }),
  counters: z.record(z.string(), z.number().int().nonnegative()).optional(),
  // Consensus steps: a Map item (one sample) or the samples so far (see src/runtime/steps/consensus.ts).
  ...ConsensusInputShape,
});

const StepEnv = z.object({
  WORKFLOW: z.string().optional(),
  STEP: z.string().optional(),
  MODEL_PROVIDER: z.enum(['bedrock', 'offline', 'openai']).default('offline'),
  MODEL_ID: z.string().optional(),
  /** `openai`: the chat-completions endpoint (`http://localhost:11434/v1`) and the model name it serves. */
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_MODEL: z.string().min(1).optional(),
  /** `openai`: the API key itself (local runs), or the SSM SecureString parameter holding it (deployed). */
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_API_KEY_PARAMETER: z.string().min(1).optional(),
  STATEMACHINES_DIR: z.string().optional(),
  /** `summary`: the output keeps no reply text and no personal tool arguments or results (the execution history records it). */
  STEP_OUTPUT: z.enum(['full', 'summary']).default('full'),
  /** `off`: the manifest's fast paths do not run, the model decides every LLM step (A/B of the two). */
  FAST_PATHS: z.enum(['on', 'off']).default('on'),
  EMAILS_TABLE: z.string().optional(),
  EVENTS_TABLE: z.string().optional(),
  AWS_REGION: z.string().optional(),
  AWS_ENDPOINT_URL_DYNAMODB: z.string().optional(),
  AWS_ENDPOINT_URL_BEDROCK_RUNTIME: z.string().optional(),
});
type StepEnv = z.infer<typeof StepEnv>;

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new InvalidInputError(`${what}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** Storage outages are worth the ASL Retry (the step re-runs; its tools are idempotent), anything else is a bug. */
async function storage<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (isTransient(e)) throw new ToolUnavailableError(`${what}: ${(e as Error).name}: ${(e as Error).message}`, { cause: e });
    throw e;
  }
}

const pick = (input: Record<string, unknown>, fields: readonly string[]) =>
  fields.length ? Object.fromEntries(fields.filter((f) => Object.hasOwn(input, f)).map((f) => [f, input[f]])) : undefined;

const show = (value: unknown) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
};

/** AC8 step output summary: fields marked `pii` (or undeclared) are only named, their values go to DEBUG. */
function outputSummary(step: StepDefinition, result: StepResult): string {
  const parts = [`NEXT_STEP=${result.next}`];
  for (const [name, value] of Object.entries(result.fields)) {
    const personal = step.outputs[name]?.pii ?? true;
    parts.push(`${fieldLabel(name)}=${personal ? '<pii>' : show(value)}`);
  }
  return parts.join(', ');
}

/**
 * The OpenAI-compatible provider from the environment. The key, when the endpoint needs one, comes
 * from `OPENAI_API_KEY` (local runs) or is read once per container from the SSM SecureString
 * parameter `OPENAI_API_KEY_PARAMETER` (deployed: the key never sits in the function's configuration).
 */
function openAiModel(cfg: StepEnv, def: WorkflowDefinition, tracer: ClientTracer): ModelProvider {
  if (!cfg.OPENAI_BASE_URL || !cfg.OPENAI_MODEL) throw new InvalidInputError('step environment: MODEL_PROVIDER=openai needs OPENAI_BASE_URL and OPENAI_MODEL');
  const options = { baseUrl: cfg.OPENAI_BASE_URL, model: cfg.OPENAI_MODEL, maxTokens: def.manifest.model.maxTokens };
  if (!cfg.OPENAI_API_KEY_PARAMETER) return new OpenAiModel({ ...options, apiKey: cfg.OPENAI_API_KEY });
  const name = cfg.OPENAI_API_KEY_PARAMETER;
  let ready: Promise<ModelProvider> | undefined;
  // The SSM client is loaded only by functions that need it: it stays out of every other cold start.
  const keyed = () =>
    (ready ??= import('@aws-sdk/client-ssm')
      .then(({ SSMClient, GetParameterCommand }) => tracer.captureAWSv3Client(new SSMClient({ region: cfg.AWS_REGION })).send(new GetParameterCommand({ Name: name, WithDecryption: true })))
      .then((out) => new OpenAiModel({ ...options, apiKey: out.Parameter?.Value }) as ModelProvider)
      .catch((e: Error) => {
        ready = undefined;
        throw new ToolUnavailableError(`the OpenAI API key parameter ${name} could not be read: ${e.name}: ${e.message}`, { cause: e });
      }));
  const provider: ModelProvider = {
    name: 'openai',
    modelId: options.model,
    converse: async (request, opts) => (await keyed()).converse(request, opts),
    forModel: (id) => openAiModel({ ...cfg, OPENAI_MODEL: id }, def, tracer),
  };
  return provider;
}

/**
 * Build the step handler. Clients and the toolbox are created on first use, so importing this
 * module (and `handler` below) does no I/O and needs no environment.
 *
 * @example
 * const handler = createHandler({ WORKFLOW: 'support-desk', STEP: '01-understand' }, { model, toolbox, emails, events });
 * const output = await handler(stepInput);
 */
export function createHandler(env: Env, services: StepServices = {}) {
  // The environment is passed explicitly (locally it is the template's, not process.env).
  const { logger, tracer, metrics, publish, instrument, countBy } = observability(env, 'stepwise-step', { logger: services.logger });
  const clock = services.clock ?? (() => new Date());
  let cfg: StepEnv | undefined;
  let dynamo: DynamoDBClient | undefined;
  let model: ModelProvider | undefined;
  const toolboxes = new Map<string, Toolbox>();
  let emails: Pick<EmailStore, 'get'> | undefined;
  let events: EventLog | undefined;
  let values: ValueStore | undefined;

  const config = () => (cfg ??= parse(StepEnv, env, 'step environment'));
  const need = (name: 'EMAILS_TABLE' | 'EVENTS_TABLE') => {
    const value = config()[name];
    if (!value) throw new InvalidInputError(`step environment: ${name} is not set`);
    return value;
  };
  const dynamoClient = () =>
    (dynamo ??= tracer.captureAWSv3Client(new DynamoDBClient({ endpoint: config().AWS_ENDPOINT_URL_DYNAMODB, region: config().AWS_REGION })));
  /**
   * Every throttled model call counts once in `ModelThrottled` (dimension `workflow`), on its own EMF
   * line: the step fails with it (the ASL retries), so no step metric would carry it.
   */
  const countingThrottles = (provider: ModelProvider, workflow: string): ModelProvider => ({
    // Getters: a provider may answer these differently over time (a scripted test model does).
    get name() {
      return provider.name;
    },
    get modelId() {
      return provider.modelId;
    },
    ...(provider.forModel && { forModel: (modelId: string) => countingThrottles(provider.forModel!(modelId), workflow) }),
    async converse(request, options) {
      try {
        return await provider.converse(request, options);
      } catch (e) {
        if (e instanceof ModelThrottledError) {
          metrics.addDimensions({ workflow });
          metrics.addMetric('ModelThrottled', MetricUnit.Count, 1);
          publish();
        }
        throw e;
      }
    },
  });
  const panel = new Map<string, ModelProvider>();
  // A panel step (`models`) asks each of its models through the same provider.
  const modelFor = (def: WorkflowDefinition, modelId?: string): ModelProvider => {
    const base = baseModel(def);
    if (modelId === undefined) return base;
    let one = panel.get(modelId);
    if (!one) panel.set(modelId, (one = base.forModel?.(modelId) ?? base));
    return one;
  };
  const baseModel = (def: WorkflowDefinition): ModelProvider => {
    if (model) return model;
    if (services.model) return (model = countingThrottles(services.model, def.manifest.name));
    const created = providerFor(def);
    return (model = countingThrottles(services.wrapModel ? services.wrapModel(created, def) : created, def.manifest.name));
  };
  const providerFor = (def: WorkflowDefinition): ModelProvider => {
    const { MODEL_PROVIDER, MODEL_ID, AWS_REGION, AWS_ENDPOINT_URL_BEDROCK_RUNTIME } = config();
    if (MODEL_PROVIDER === 'offline') {
      logger.warn('MODEL_PROVIDER=offline: LLM steps are decided by the deterministic offline stand-in, NOT an LLM');
      return OfflineModel.forWorkflow(def);
    }
    if (MODEL_PROVIDER === 'openai') return openAiModel(config(), def, tracer);
    return new BedrockModel({
      modelId: MODEL_ID ?? def.manifest.model.id,
      maxTokens: def.manifest.model.maxTokens,
      region: AWS_REGION,
      endpoint: AWS_ENDPOINT_URL_BEDROCK_RUNTIME,
      tracer,
    });
  };
  const eventLog = () => (events ??= services.events ?? dynamoEventLog(dynamoClient(), need('EVENTS_TABLE')));
  const valueStore = () => (values ??= services.values ?? dynamoValueStore(dynamoClient(), need('EVENTS_TABLE')));

  return instrument(async (event: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<StepOutput> => {
    const started = clock();
    const input = parse(StepInputSchema, event, 'step input') satisfies StepInput;
    const { WORKFLOW, STEP, STATEMACHINES_DIR } = config();
    if ((WORKFLOW && WORKFLOW !== input.workflow) || (STEP && STEP !== input.step))
      throw new InvalidInputError(`this function runs ${WORKFLOW}/${STEP}, not ${input.workflow}/${input.step}`);
    const plugin = await loadPlugin(input.workflow, STATEMACHINES_DIR);
    const def = plugin.def;
    const checked = checkInput(def, input.input);
    if (checked.problem) throw new InvalidInputError(`step input: input.${checked.problem} (the ${def.manifest.name} input schema)`);
    // The single-prompt agent (manifest `singlePrompt`) runs the whole workflow as this one step.
    const step = input.step === MONOLITHIC_STEP && def.manifest.singlePrompt ? monolithicStep(def) : getStep(def, input.step);
    const keys = { execution: input.execution.name, step: step.name, count: input.count };
    let toolbox = services.toolbox ?? toolboxes.get(def.manifest.name);
    if (!toolbox) {
      toolbox = createToolbox(Object.values(plugin.tools), { env, tracer, clock });
      if (services.wrapToolbox) toolbox = services.wrapToolbox(toolbox);
      toolboxes.set(def.manifest.name, toolbox);
    }

    // Values an earlier step offloaded (state-size guard) are read back: the step sees values, never pointers.
    const resolve = (state: Record<string, unknown>) => storage('offloaded values', () => resolveOffloaded(state, valueStore, input.execution.name));
    const previous = { ...input.previous, fields: await resolve(input.previous.fields), data: await resolve(input.previous.data) };
    const resolved = { ...input, previous };

    const run = (temperature?: number) =>
      runStep({
        plugin,
        step,
        input: resolved,
        toolbox,
        tool: toolContext(input, context && (() => context.getRemainingTimeInMillis())),
        model: (modelId) => modelFor(def, modelId),
        fastPaths: config().FAST_PATHS === 'on',
        untrusted: async () => {
          if (!isEmailWorkflow(def)) return pick(input.input, untrustedFields(def));
          emails ??= services.emails ?? dynamoEmailStore(dynamoClient(), need('EMAILS_TABLE'));
          return storage('email store', () => emailUntrusted(input.input, emails!));
        },
        temperature,
      });
    // A consensus sample or a tally between waves answers the Map directly: only the vote is the step's result.
    const phase = await consensusPhase(def, step, resolved, run);
    if (phase && 'reply' in phase) return phase.reply as StepOutput;
    const ran = phase?.result ?? (await run());

    // Tool-backed outputs (`from`) replace whatever the model reported; a replaced value may be a guess or an injection.
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
    if (missing.length)
      throw new StepFailedError(`${step.name}: chose ${result.next} without a successful ${missing.join(', ')} call (${result.reason})`);

    const full: StepOutput = {
      step: step.name,
      next: result.next,
      reason: result.reason,
      decidedBy: result.decidedBy,
      fields: result.fields,
      data: { ...input.previous.data, ...result.fields },
      count: input.count,
      ...(result.reply === undefined ? {} : { reply: result.reply }),
      toolCalls: result.toolCalls,
      usage: result.usage,
      durationMs: clock().getTime() - started.getTime(),
      ...(result.transcript && { transcript: { ...result.transcript, modelId: config().MODEL_ID ?? def.manifest.model.id } }),
      ...(phase && { consensus: phase.summary }),
    };
    // The state-size guard: `data` keeps earlier pointers (input.previous.data above), and large new values become pointers.
    // The transcript is bounded on its own (TRANSCRIPT_MAX_BYTES) and never enters the state, so it does not count here.
    const returned = (o: StepOutput) => (config().STEP_OUTPUT === 'summary' ? summarized(o, plugin) : o);
    const { output, moved } = await storage('offloaded values', () =>
      offloadLargeFields(full, valueStore, input.execution.name, services.stateBudgetBytes ?? STATE_BUDGET_BYTES, ({ transcript: _, ...o }) => payloadBytes(returned(o))),
    );
    if (moved.length) logger.info(`Step output values offloaded (state-size guard): ${moved.join(', ')}`, { ...keys, moved });
    await storage('event log', () =>
      eventLog().append(
        stepCompletedEvent(output, {
          executionName: input.execution.name,
          at: clock(),
          outputs: step.outputs,
          loggableArgs: (tool, args) => (plugin.tools[tool] ? loggableArgs(plugin.tools[tool], args) : {}),
          ...(isEmailWorkflow(def) && { from: (input.input.email as { from: string }).from }),
        }),
      ),
    );

    const notCompleted = result.toolCalls.filter((c) => c.error !== undefined);
    // Names from the loaded workflow only: no execution, email or customer value becomes a dimension.
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
      countBy(field.metric.name, { workflow: def.manifest.name, step: step.name, value: field.metric.values.includes(value) ? value : 'other' });
    }
    // Reached through a Catch or the Choice Default, or reporting `handoff: true` (a step before it could not finish):
    // the case goes to a person and the execution still succeeds.
    if (step.name === def.manifest.fallback) {
      const handedOff = input.error !== null || input.previous.next !== step.name || result.fields.handoff === true;
      metrics.addMetric('FallbackHandoff', MetricUnit.Count, handedOff ? 1 : 0);
    }

    for (const call of notCompleted)
      logger.warn(`Tool call not completed: ${call.tool}`, { ...keys, tool: call.tool, error: call.error });
    logger.info(`Step completed: ${step.name} (${output.durationMs}ms)`, { ...keys, durationMs: output.durationMs, decidedBy: output.decidedBy, usage: output.usage });
    logger.info(`Step output: ${outputSummary(step, result)}`, keys);
    logger.debug('Step output (customer data)', { ...keys, fields: result.fields, reply: result.reply, toolCalls: result.toolCalls });
    logger.info(`Step transition: ${step.name} → ${result.next} (reason: ${result.reason})`, { ...keys, from_step: step.name, to_step: result.next, reason: result.reason });
    // The summary is a log line: failing to read it must not fail a step whose work is done (the reply is sent).
    if (result.next === DONE) {
      await eventLog()
        .list(input.execution.name)
        .then((events) => {
          const steps = events.flatMap((e) => (e.type === 'StepCompleted' ? [e.step] : []));
          logger.info(`Workflow complete: ${steps.length} steps executed: [${steps.join(', ')}]`, { ...keys, steps });
        })
        .catch((e: Error) => logger.warn('Could not read the event log for the final summary', { ...keys, error: `${e.name}: ${e.message}` }));
    }
    return returned(output);
  });
}

/**
 * The output without personal data, for environments whose execution history must not hold it:
 * tool calls keep their name, loggable arguments and outcome; the reply text and tool results stay
 * in the event log, and the model transcript (which quotes the untrusted input) is left out. The state (`fields`, `data`) is unchanged: later steps need it.
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

export const handler = createHandler(process.env);
