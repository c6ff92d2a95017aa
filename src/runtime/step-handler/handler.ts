/**
 * The one Lambda entry every workflow step uses (LLM and code steps alike). It validates the
 * `StepInput` the compiled Task state sends, runs the step named in it, sets the outputs declared
 * with `from` from the step's tool results, and returns the `StepOutput` the ASL keeps at
 * `$.result`; it records a `StepCompleted` event, logs the step (transition, timing, output
 * summary, and the step list when the workflow ends) and emits its
 * metrics (dimensions `workflow` and `step`): `StepCompleted`, `StepDurationMs`, the model's token
 * usage (`ModelInputTokens`, `ModelOutputTokens`, `ModelCacheReadTokens`, `ModelCacheWriteTokens`)
 * and `ToolCallRefused`, the tool calls that did not complete (refused or failed); and, on a line
 * of its own, `ModelThrottled` (dimension `workflow`) for every model call the provider throttled.
 * The phases of an invocation are in ./phases.ts.
 */

import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import type { Env } from '../../core/env.ts';
import { InvalidInputError } from '../../core/errors.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { ModelProvider } from '../contracts/model-port.ts';
import type { StepOutput } from '../contracts/step.ts';
import { dynamoEventLog, type EventLog } from '../event-log.ts';
import { type Observability, observability } from '../observability.ts';
import { dynamoValueStore, STATE_BUDGET_BYTES, type ValueStore } from '../offload.ts';
import type { WorkflowPlugin } from '../plugin.ts';
import { createToolbox } from '../tools/toolbox.ts';
import type { Toolbox } from '../tools/types.ts';
import { dynamoEmailStore, type EmailStore } from '../triggers/email/store.ts';
import { warnMissingInputs } from './expected-inputs.ts';
import {
  checkResult,
  prepareStep,
  recordStep,
  reportStep,
  returnedOutput,
  runPrepared,
  type StepAdapters,
} from './phases.ts';
import { parse, StepEnv } from './step-input.ts';
import { stepModel } from './step-model.ts';

export { StepInputSchema } from './step-input.ts';

/** Adapters the local runtime or a test passes instead of the ones built from the environment. */
export interface StepServices {
  /**
   * @default by `MODEL_PROVIDER`: `bedrock` (MODEL_ID), `openai` (OPENAI_BASE_URL, OPENAI_MODEL) or `offline` (the
   * workflow's offline-model.yaml)
   */
  model?: ModelProvider;
  /** Wraps the provider the environment selects (`stepwise eval --record` keeps every call). @default none */
  wrapModel?: (model: ModelProvider, def: WorkflowDefinition) => ModelProvider;
  /** @default the workflow's tools over the AWS/local adapters the environment describes */
  toolbox?: Toolbox;
  /**
   * Wraps the toolbox built from the environment (a fork pins some tools' results; the others run as usual).
   * @default none
   */
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
  const obs = observability(env, 'stepwise-step', { logger: services.logger });
  const adapters = stepAdapters(env, services, obs);
  return obs.instrument(
    async (event: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<StepOutput> => {
      const started = adapters.clock();
      const prepared = await prepareStep(event, adapters);
      warnMissingInputs(prepared, adapters.logger);
      const run = await runPrepared(prepared, adapters, context);
      if ('reply' in run) return run.reply;
      const result = checkResult(prepared, run.ran, adapters.logger);
      const output = await recordStep(prepared, result, run.consensus, started, adapters);
      await reportStep(prepared, result, output, adapters);
      return returnedOutput(output, prepared.plugin, adapters.config());
    },
  );
}

/** The handler's adapters: those `services` passes, the others built from `env` on first use. */
function stepAdapters(env: Env, services: StepServices, obs: Observability): StepAdapters {
  const { logger, tracer, metrics, countBy } = obs;
  const clock = services.clock ?? (() => new Date());
  let cfg: StepEnv | undefined;
  let dynamo: DynamoDBClient | undefined;
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
    (dynamo ??= tracer.captureAWSv3Client(
      new DynamoDBClient({ endpoint: config().AWS_ENDPOINT_URL_DYNAMODB, region: config().AWS_REGION }),
    ));
  const toolbox = (plugin: WorkflowPlugin): Toolbox => {
    let made = services.toolbox ?? toolboxes.get(plugin.def.manifest.name);
    if (!made) {
      made = createToolbox(Object.values(plugin.tools), { env, tracer, clock });
      if (services.wrapToolbox) made = services.wrapToolbox(made);
      toolboxes.set(plugin.def.manifest.name, made);
    }
    return made;
  };
  return {
    logger,
    metrics,
    countBy,
    config,
    clock,
    stateBudgetBytes: services.stateBudgetBytes ?? STATE_BUDGET_BYTES,
    model: stepModel(config, services, obs),
    toolbox,
    emails: () => (emails ??= services.emails ?? dynamoEmailStore(dynamoClient(), need('EMAILS_TABLE'))),
    eventLog: () => (events ??= services.events ?? dynamoEventLog(dynamoClient(), need('EVENTS_TABLE'))),
    valueStore: () => (values ??= services.values ?? dynamoValueStore(dynamoClient(), need('EVENTS_TABLE'))),
  };
}

export const handler = createHandler(process.env);
