/**
 * A local session of any workflow: one DynamoDB Local with the tables of the workflow's
 * synthesized stack, and the local runtime running its synthesized ASL. Inputs start executions
 * the way the workflow's triggers do: a JSON input is checked against the workflow's input schema
 * and started directly (StartExecution); an `.eml` file of an email workflow goes through the REAL
 * email ingress (`ingestParsed`, see email-ingress.ts), so screening, duplicate detection and the step
 * handlers are exactly what runs in AWS. Results are read back from the execution history and the
 * outbox (see run-result.ts). Nothing of any workflow is implemented here.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { ENTRY_METADATA } from '../../cdk/metadata.ts';
import { EMAIL_INGRESS_ENTRY } from '../../cdk/names.ts';
import { InvalidInputError, LocalServiceError } from '../../core/errors.ts';
import { calledWorkflows } from '../../definitions/workflow/constructs/workflow-step.ts';
import { checkInput, isEmailWorkflow } from '../../definitions/workflow/input.ts';
import { loadWorkflow } from '../../definitions/workflow/loader.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { projectEnvironment } from '../../project/project.ts';
import { dynamoEventLog, type EventLog, type StepwiseEvent } from '../../runtime/event-log.ts';
import type { StepServices } from '../../runtime/step-handler/handler.ts';
import { closeMcpConnections } from '../../runtime/tools/mcp/tools.ts';
import { readOutbox } from '../../runtime/triggers/email/mail.ts';
import type { EventOutcome } from '../../runtime/triggers/event-wait/waits.ts';
import { type LocalExecution, LocalRuntime, type LocalRuntimeOptions, type TaskHandler } from '../asl/runtime.ts';
import { sessionDynamoDb } from '../cloud/dynamodb-connection.ts';
import { createTablesFromTemplate, type DynamoDbLocal } from '../cloud/dynamodb-local.ts';
import type { LocalEventBus } from '../cloud/eventbridge/bus.ts';
import { type CfnTemplate, resolveIntrinsics } from '../cloud/intrinsics.ts';
import { type SynthesizedApp, synthProject, withTablePrefix } from '../cloud/synth.ts';
import { type ForkPoint, forkHistory } from '../records/fork.ts';
import type { ExecutionRecord, ForkChange } from '../records/history.ts';
import { PauseStore, type Resolution } from '../records/pauses.ts';
import { DEFAULT_STATE_DIRS } from '../records/state-dirs.ts';
import type { EmailIngressWiring, LocalEmailIngress } from './email-ingress.ts';
import {
  asOutcome,
  envelopeOf,
  fileLedger,
  LocalEventWaits,
  memoryLedger,
  type OutsideEvent,
  recordUnmatched,
  resumerBus,
  waitingFor,
  workflowPauses,
} from './event-waits.ts';
import { type ParsedInput, readInputs } from './input-files.ts';
import { assertModelAccess, type ModelChoice, modelEnvironment, type OpenAiEndpoint } from './model-choice.ts';
import { describeError, executionResult, type PauseSummary, pauseSummary, type RunResult } from './run-result.ts';
import { type RunMode, runsSinglePrompt, singlePromptModel } from './single-prompt.ts';
import { SinglePromptAgent } from './single-prompt-session.ts';

export { expandInputPaths } from './input-files.ts';
export type { ModelChoice, OpenAiEndpoint } from './model-choice.ts';
export {
  executionUsage,
  type OutboxMail,
  type PauseSummary,
  pauseSummary,
  type RunResult,
  type RunStatus,
  type RunStep,
  type RunToolCall,
  workflowTrail,
} from './run-result.ts';

export interface WorkflowSessionOptions {
  /** The workflow to run (a folder of `statemachines/`). */
  readonly workflow: string;
  /** Deployment environment to synthesize (`-c env=NAME`). @default 'dev' */
  readonly env?: string;
  /**
   * `MODEL_PROVIDER` of every step: `bedrock` needs AWS credentials (checked before anything starts).
   * @default 'offline'
   */
  readonly model?: ModelChoice;
  /** `model: 'openai'`: the endpoint every LLM step calls. */
  readonly openai?: OpenAiEndpoint;
  /**
   * Added to every function's environment after the manifest's `local.env` (e.g. another registry file). @default none
   */
  readonly localEnv?: Readonly<Record<string, string>>;
  /**
   * The outbox (`OUTBOX_FILE`, JSON lines) that tools sending messages write to. @default a file in a temporary folder,
   * deleted by `close()`
   */
  readonly outboxFile?: string;
  /**
   * Where executions are stored for `stepwise history`; `false` stores nothing. @default the local runtime's
   * (`.stepwise/executions`)
   */
  readonly historyDir?: string | false;
  /** Where paused executions are kept (see `LocalRuntime`'s `pausesDir`). @default the runtime's */
  readonly pausesDir?: string | false;
  /**
   * Where the bodies of emails the ingress receives are recorded, for forks of their executions; `false` records none.
   * @default `.stepwise/emails` when `historyDir` is not `false`
   */
  readonly emailsDir?: string | false;
  /**
   * Where the outcome of every outside event delivered to the workflow's event steps is kept (JSON lines); `false`
   * keeps them in memory. @default `.stepwise/events.jsonl` when `historyDir` is not `false`
   */
  readonly eventsFile?: string | false;
  /** `POWERTOOLS_LOG_LEVEL` of every function (`SILENT` for clean CLI output). @default the template's */
  readonly logLevel?: string;
  /**
   * Adapters for every step handler (`createHandler(env, services)`): a model or toolbox stand-in. @default built from
   * each function's environment
   */
  readonly services?: StepServices;
  /** Replace Task states by name with scripted handlers (tests). */
  readonly handlerOverrides?: Record<string, TaskHandler>;
  /** Wait this long before every ASL retry instead of the manifest's backoff. @default the ASL's */
  readonly retryDelayMs?: number;
  /** The email ingress clock (receipt time). @default () => new Date() */
  readonly clock?: () => Date;
  /** Inject faults into chosen Task states (see `LocalRuntimeOptions.faults`). @default none */
  readonly faults?: LocalRuntimeOptions['faults'];
  /** Told each execution's name as it starts (before it ends): Studio opens its live view. @default none */
  readonly onStart?: (name: string) => void;
  /**
   * `single-prompt` (or its old name `monolithic`): every input runs the workflow's single-prompt agent (one LLM step,
   * every tool; see single-prompt-session.ts) instead of its state machine; it needs a model (`services.model`, or not `offline`).
   * @default 'steps'
   */
  readonly mode?: RunMode;
}

/** The manifest's `local.env`: a value that names a file of the workflow folder becomes its path. */
function manifestLocalEnv(def: WorkflowDefinition): Record<string, string> {
  return Object.fromEntries(
    Object.entries(def.manifest.local.env).map(([name, value]) => [
      name,
      existsSync(join(def.dir, value)) ? join(def.dir, value) : value,
    ]),
  );
}

/** The workflow's stack as deployed: its template, its tables and the email ingress's environment. */
interface DeployedStack {
  template: CfnTemplate;
  /** Table names by the environment variable the functions read them from. */
  tables: Record<string, string>;
  /** The email ingress function's environment; undefined when the stack has none. */
  ingress: Record<string, string> | undefined;
}

/** The stack of `def`'s state machine in `app`. @throws LocalServiceError when the app has no such stack. */
function deployedStack(app: SynthesizedApp, def: WorkflowDefinition, env: string): DeployedStack {
  const machine = app.stateMachines.find((m) => m.workflowName === def.manifest.name);
  if (!machine) throw new LocalServiceError(`the ${env} app has no state machine for workflow ${def.manifest.name}`);
  const template = app.templates[machine.stack]!;
  const ctx = app.contexts[machine.stack]!;
  // Every function's environment as deployed: the table variables name the tables, the ingress's configures the local ingress.
  const environments = Object.values(template.Resources ?? {})
    .filter((r) => r.Type === 'AWS::Lambda::Function')
    .map((r) => ({
      entry: r.Metadata?.[ENTRY_METADATA],
      variables: resolveIntrinsics<Record<string, string>>(
        (r.Properties?.Environment as { Variables?: unknown })?.Variables ?? {},
        template,
        ctx,
      ),
    }));
  const tables = Object.fromEntries(
    environments.flatMap((f) => Object.entries(f.variables).filter(([k]) => k.endsWith('_TABLE'))),
  );
  const ingress = environments.find((f) => f.entry === EMAIL_INGRESS_ENTRY)?.variables;
  if (isEmailWorkflow(def) && !ingress)
    throw new LocalServiceError(`stack ${machine.stack} has no email ingress function (${EMAIL_INGRESS_ENTRY})`);
  return { template, tables, ingress };
}

/**
 * The runtime of a session: the app's functions with the environment they are deployed with, plus the local one
 * (the model, the outbox, DynamoDB Local, the manifest's and the caller's `local.env`).
 */
function sessionRuntimeOptions(
  app: SynthesizedApp,
  def: WorkflowDefinition,
  options: WorkflowSessionOptions,
  local: { model: ModelChoice; outboxFile: string; dynamo: DynamoDbLocal },
): LocalRuntimeOptions & { app: SynthesizedApp } {
  const { model, outboxFile, dynamo } = local;
  return {
    app,
    services: options.services,
    handlerOverrides: options.handlerOverrides,
    historyDir: options.historyDir,
    ...(options.pausesDir !== undefined && { pausesDir: options.pausesDir }),
    retryDelayMs: options.retryDelayMs,
    faults: options.faults,
    // The runtime gives functions dummy credentials when it knows the DynamoDB endpoint; Bedrock needs the real ones.
    ...(model !== 'bedrock' && { dynamo: { endpoint: dynamo.endpoint } }),
    extraEnv: {
      MODEL_PROVIDER: model,
      OUTBOX_FILE: outboxFile,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      ...manifestLocalEnv(def),
      ...options.localEnv,
      ...modelEnvironment(model, options.openai),
      ...(options.logLevel && { POWERTOOLS_LOG_LEVEL: options.logLevel }),
    },
  };
}

/**
 * A local session of one workflow.
 *
 * @example
 * const session = await WorkflowSession.start({ workflow: 'support-desk', model: 'offline' });
 * try {
 *   const results = await session.runFiles(['statemachines/support-desk/samples']);
 * } finally {
 *   await session.close();
 * }
 */
export class WorkflowSession {
  /** Table names by the environment variable the functions read them from (`EVENTS_TABLE`, `TICKETS_TABLE`, ...). */
  readonly tables: Readonly<Record<string, string>>;
  /** Resumes this workflow's paused event steps with outside events, keeping every outcome. */
  readonly eventWaits: LocalEventWaits;
  /**
   * The stack's EventBridge rules, in process: an event put here that matches an event step's rule resumes the
   * execution waiting for it through {@link eventWaits}. Undefined when the workflow has no event step.
   */
  readonly bus?: LocalEventBus;
  private readonly finished = new Map<string, LocalExecution>();
  private readonly email?: LocalEmailIngress;
  private readonly eventLog?: EventLog;
  private readonly onStart?: (name: string) => void;
  private readonly agent?: SinglePromptAgent;
  private closed?: Promise<void>;

  private constructor(
    readonly workflow: WorkflowDefinition,
    readonly runtime: LocalRuntime,
    readonly dynamo: DynamoDbLocal,
    readonly outboxFile: string,
    private readonly tempDir: string | undefined,
    wiring: EmailIngressWiring & {
      tables: Record<string, string>;
      eventsFile: string | false;
      template: CfnTemplate;
      onStart?: (name: string) => void;
      agent?: SinglePromptAgent;
      /** The email ingress's module, loaded only for a stack with an ingress (its MIME and HTML parsers are large). */
      emailIngress?: typeof import('./email-ingress.ts');
    },
  ) {
    this.tables = wiring.tables;
    this.eventWaits = new LocalEventWaits(
      workflowPauses(runtime, workflow.manifest.name),
      wiring.eventsFile ? fileLedger(wiring.eventsFile) : memoryLedger(),
    );
    this.bus = resumerBus(wiring.template, this.eventWaits);
    this.onStart = wiring.onStart;
    this.agent = wiring.agent;
    if (wiring.tables.EVENTS_TABLE) this.eventLog = dynamoEventLog(dynamo.client, wiring.tables.EVENTS_TABLE);
    this.email = wiring.emailIngress?.LocalEmailIngress.wire(
      {
        workflow,
        runtime,
        eventWaits: this.eventWaits,
        agent: this.agent,
        onStart: this.onStart,
        report: (file, execution, messageId) => this.report(file, execution, messageId),
      },
      dynamo.client,
      wiring,
    );
  }

  /**
   * Synthesize the app, start DynamoDB Local with the tables of the workflow's stack, and prepare
   * the runtime.
   * @throws MissingCredentialsError for `model: 'bedrock'` without credentials or region (before anything starts).
   * @throws DefinitionError for an unknown or invalid workflow.
   */
  static async start(options: WorkflowSessionOptions): Promise<WorkflowSession> {
    const env = options.env ?? 'dev';
    const model = options.model ?? 'offline';
    const def = loadWorkflow(options.workflow);
    await assertModelAccess(model, options.openai);
    const project = await projectEnvironment(env, { allowPlaceholders: true });
    const agentModel = runsSinglePrompt(options.mode)
      ? (options.services?.model ?? singlePromptModel(def, model, { openai: options.openai, modelId: project.modelId }))
      : undefined;
    const synthesized = await synthProject(env);
    deployedStack(synthesized, def, env); // an app without the workflow fails before an emulator starts
    const tempDir = options.outboxFile ? undefined : mkdtempSync(join(tmpdir(), 'stepwise-session-'));
    const outboxFile = options.outboxFile ?? join(tempDir!, 'outbox.jsonl');
    let dynamo: DynamoDbLocal | undefined;
    try {
      dynamo = await sessionDynamoDb();
      const app = withTablePrefix(synthesized, dynamo.tablePrefix);
      const { template, tables, ingress } = deployedStack(app, def, env);
      await createTablesFromTemplate(dynamo.client, template, dynamo.tablePrefix);
      // The workflows it starts as steps run in the session too, with their tables. Locally a table is
      // named by its logical id: one a child shares with the parent is the same table.
      const created = new Set(Object.keys(template.Resources ?? {}));
      for (const child of calledWorkflows(def)) {
        const stack = app.stateMachines.find((m) => m.workflowName === child)?.stack;
        const resources = Object.entries(stack ? (app.templates[stack]!.Resources ?? {}) : {}).filter(
          ([id]) => !created.has(id),
        );
        for (const [id] of resources) created.add(id);
        await createTablesFromTemplate(dynamo.client, { Resources: Object.fromEntries(resources) }, dynamo.tablePrefix);
      }
      const runtimeOptions = sessionRuntimeOptions(app, def, options, { model, outboxFile, dynamo });
      const runtime = await LocalRuntime.create(runtimeOptions);
      const emailsDir = options.emailsDir ?? (options.historyDir === false ? false : DEFAULT_STATE_DIRS.emails);
      const eventsFile =
        options.eventsFile ?? (options.historyDir === false ? false : DEFAULT_STATE_DIRS.outsideEvents);
      const local = { outboxFile, dynamo, runtime: runtimeOptions };
      return new WorkflowSession(def, runtime, dynamo, outboxFile, tempDir, {
        tables,
        ingress,
        email: project.email,
        clock: options.clock ?? (() => new Date()),
        emailsDir,
        eventsFile,
        template,
        onStart: options.onStart,
        agent: agentModel && SinglePromptAgent.create(app, def, { ...local, model: agentModel }),
        emailIngress: ingress?.EMAILS_TABLE ? await import('./email-ingress.ts') : undefined,
      });
    } catch (e) {
      await dynamo?.stop();
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
      throw e;
    }
  }

  /** The address an email workflow's mail is sent to locally; undefined for other workflows. */
  get inbox(): string | undefined {
    return this.email?.inbox;
  }

  /**
   * Run input files one after the other, in order: `.json` / `.jsonl` inputs are started directly,
   * `.eml` files are delivered through the email ingress. Never throws for one input: an
   * unreadable or invalid one is `REJECTED`, an unexpected error `FAILED`, each with a reason.
   * @param onResult called as each input finishes (progress display).
   */
  async runFiles(
    files: readonly string[],
    onResult?: (result: RunResult, index: number, total: number) => void,
  ): Promise<RunResult[]> {
    const jobs = files.flatMap((file) =>
      extname(file).toLowerCase() === '.eml'
        ? [() => this.deliverFile(file)]
        : readInputs(file).map((input) => () => this.runParsed(input)),
    );
    const results: RunResult[] = [];
    for (const [i, job] of jobs.entries()) {
      const result = await job();
      results.push(result);
      onResult?.(result, i, jobs.length);
    }
    return results;
  }

  /**
   * Start one execution with `input` (checked against the workflow's input schema, as a direct
   * `StartExecution` would be by the caller) and report what happened. Never throws.
   * @param label how the result names the input.
   */
  runInput(input: unknown, label: string, name: string = randomUUID()): Promise<RunResult> {
    return this.runParsed({ label, value: input }, name);
  }

  private async runParsed({ label, value, problem }: ParsedInput, name: string = randomUUID()): Promise<RunResult> {
    const none = { executionName: null, steps: [], toolCalls: [], outbox: [] };
    if (problem) return { file: label, status: 'REJECTED', reason: problem, ...none };
    if (isEmailWorkflow(this.workflow)) {
      return {
        file: label,
        status: 'REJECTED',
        reason: `${this.workflow.manifest.name} starts from email: give .eml files`,
        ...none,
      };
    }
    const checked = checkInput(this.workflow, value);
    if (checked.problem)
      return {
        file: label,
        status: 'REJECTED',
        reason: `input does not match the workflow's input schema: ${checked.problem}`,
        ...none,
      };
    if (this.agent) {
      this.onStart?.(name);
      return this.agent.run(label, checked.input!, name);
    }
    try {
      const started = this.runtime.startExecution(this.workflow.manifest.name, checked.input, { name });
      this.onStart?.(name);
      const execution = await started;
      return this.report(label, execution);
    } catch (e) {
      return {
        file: label,
        status: 'FAILED',
        reason: describeError((e as Error).name, (e as Error).message),
        ...none,
        executionName: name,
      };
    }
  }

  /** Deliver one `.eml` file through the email ingress. Never throws (see {@link runFiles}). */
  async deliverFile(file: string): Promise<RunResult> {
    let raw: Buffer;
    try {
      raw = readFileSync(file);
    } catch (e) {
      return {
        file,
        messageId: null,
        executionName: null,
        status: 'REJECTED',
        reason: `unreadable: ${(e as Error).message}`,
        steps: [],
        toolCalls: [],
        outbox: [],
      };
    }
    return this.deliverEmail(new Uint8Array(raw), file);
  }

  /**
   * Deliver one raw mail through the email ingress, as SES would (verdicts from the headers SES
   * adds), and report what happened. Never throws (see {@link runFiles}).
   * @param file how the result names the mail.
   */
  async deliverEmail(raw: Uint8Array | string, file: string): Promise<RunResult> {
    if (this.email) return this.email.deliver(raw, file);
    const { refuseWithoutTrigger } = await import('./email-ingress.ts');
    return refuseWithoutTrigger(this.workflow, raw, file);
  }

  /** Keep a finished execution (see {@link execution}) and report it with the mail it sent. */
  private report(file: string, execution: LocalExecution, messageId?: string | null): RunResult {
    this.finished.set(execution.name, execution);
    const sent = readOutbox(this.outboxFile).filter((mail) => mail.execution === execution.name);
    return executionResult(this.workflow, { file, execution, sent, messageId });
  }

  /**
   * Resume an execution paused at a checkpoint (persisted by this or an earlier session) and
   * report it like `runInput`: it runs on until it ends or pauses again. An output sent after the
   * checkpoint's deadline resumes into the timeout path instead (`reason` says so).
   * @throws ExecutionDoesNotExist when no execution of that name is paused; ExecutionClaimedError when another resume
   * runs or ran it.
   */
  async resume(execution: string, resolution: Resolution, options: { now?: Date } = {}): Promise<RunResult> {
    this.onStart?.(execution);
    const resumed = await this.runtime.resumeExecution(execution, resolution, options);
    const result = this.report(resumed.name, resumed);
    const late = resumed.resumedWith === 'timeout' && !('timeout' in resolution);
    return late
      ? {
          ...result,
          reason: `the checkpoint had timed out: the ${'output' in resolution ? 'output' : 'failure'} was not accepted and the timeout path ran`,
        }
      : result;
  }

  /**
   * Fork `parent` (a recorded execution of this workflow, local or imported) at `point`: a new
   * execution named `name` runs the same ASL from the point's state with `state`, continuing the
   * parent's history before it, and is reported like `runInput`. Never throws for a failed run.
   */
  async fork(
    parent: ExecutionRecord,
    point: ForkPoint,
    state: unknown,
    name: string,
    changes: ForkChange[] = [],
  ): Promise<RunResult> {
    this.onStart?.(name);
    const execution = await this.runtime.forkExecution(this.workflow.manifest.name, {
      state: point.entryState,
      stateInput: state,
      name,
      history: forkHistory(parent, point),
      executionInput: parent.input,
      parent: { execution: parent.name, step: point.step, index: point.index, ...(changes.length && { changes }) },
    });
    return this.report(`${parent.name} from ${point.step}`, execution);
  }

  /** Executions paused at a checkpoint (of any workflow), oldest first. */
  pausedExecutions(): PauseSummary[] {
    return this.runtime.pausedExecutions().map(pauseSummary);
  }

  /** The finished execution of this session with this name. */
  execution(name: string): LocalExecution | undefined {
    return this.finished.get(name);
  }

  /** The event log of one execution, oldest first (empty for a workflow without an events table). */
  async events(executionName: string): Promise<StepwiseEvent[]> {
    return this.eventLog ? this.eventLog.list(executionName) : [];
  }

  /** Stop DynamoDB Local (its data is gone) and delete the temporary outbox. Idempotent. */
  close(): Promise<void> {
    return (this.closed ??= (async () => {
      await this.bus?.drain();
      await closeMcpConnections();
      await this.dynamo.stop();
      if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
    })());
  }
}

/**
 * `stepwise resume` (and Studio's approve/reject): resume a paused local execution in a new session
 * of its workflow, through the same synthesized ASL, and report it like `run`.
 * @throws ExecutionDoesNotExist when no execution of that name is paused; ExecutionClaimedError when another resume
 * ran it; InvalidInputError when it is no Stepwise workflow's.
 */
export async function resumePaused(
  execution: string,
  resolution: Resolution,
  options: Pick<WorkflowSessionOptions, 'env' | 'model' | 'logLevel' | 'historyDir' | 'emailsDir' | 'onStart'> & {
    pausesDir?: string;
  } = {},
): Promise<RunResult> {
  const paused = new PauseStore(options.pausesDir).require(execution);
  if (!paused.workflow) throw new InvalidInputError(`${execution} is not an execution of a Stepwise workflow`);
  const session = await WorkflowSession.start({ ...options, workflow: paused.workflow });
  try {
    return await session.resume(execution, resolution);
  } finally {
    await session.close();
  }
}

/**
 * `stepwise send-event`: deliver one outside event to the project's paused event steps, as the
 * deployed resumer would. Each workflow with an execution waiting for it resumes in a session of
 * its own (its tables, its synthesized ASL); with none, nothing starts. Every outcome is appended
 * to `eventsFile`, which is also what tells a later event for a wait already used up
 * (`already-resumed`) from one for no wait at all.
 */
export async function sendOutsideEvent(
  event: OutsideEvent,
  options: Pick<WorkflowSessionOptions, 'env' | 'model' | 'logLevel' | 'historyDir' | 'emailsDir'> & {
    pausesDir?: string;
    eventsFile?: string;
  } = {},
): Promise<EventOutcome[]> {
  const envelope = envelopeOf(event);
  const eventsFile = options.eventsFile ?? DEFAULT_STATE_DIRS.outsideEvents;
  const waiting = waitingFor(envelope, new PauseStore(options.pausesDir).list());
  const workflows = [...new Set(waiting.map(({ wait }) => wait.workflow))];
  if (!workflows.length) return [asOutcome(recordUnmatched(envelope, fileLedger(eventsFile)))];
  const outcomes: EventOutcome[] = [];
  for (const workflow of workflows) {
    const session = await WorkflowSession.start({ ...options, workflow, eventsFile });
    try {
      outcomes.push(...(await session.eventWaits.deliver(envelope)).outcomes);
    } finally {
      await session.close();
    }
  }
  return outcomes;
}
