/**
 * A local session of any workflow: one DynamoDB Local with the tables of the workflow's
 * synthesized stack, and the local runtime running its synthesized ASL. Inputs start executions
 * the way the workflow's triggers do: a JSON input is checked against the workflow's input schema
 * and started directly (StartExecution); an `.eml` file of an email workflow goes through the REAL
 * email ingress (`ingest` + `localStarter`), so screening, duplicate detection and the step
 * handlers are exactly what runs in AWS. Results are read back from the execution history and the
 * outbox. Nothing of any workflow is implemented here.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { ExecutionDoesNotExist } from '@aws-sdk/client-sfn';
import type { StepServices } from '../runtime/step-handler/handler.ts';
import type { DecidedBy, StepOutput, TokenUsage } from '../runtime/contracts.ts';
import { InvalidInputError, LocalServiceError, MissingCredentialsError, causeMessage } from '../core/errors.ts';
import { dynamoEventLog, type EventLog, type StepwiseEvent } from '../runtime/event-log.ts';
import { checkInput, isEmailWorkflow } from '../definitions/workflow/input.ts';
import { loadWorkflow } from '../definitions/workflow/loader.ts';
import type { WorkflowDefinition } from '../definitions/workflow/schema.ts';
import { DEFAULT_POLICY, isRejection, localSesMessageId, parseInbound } from '../runtime/triggers/email/checks.ts';
import { ingest, type IngestDeps } from '../runtime/triggers/email/ingest.ts';
import { readOutbox } from '../runtime/triggers/email/mail.ts';
import { localStarter } from '../runtime/triggers/email/starter.ts';
import { dynamoEmailStore } from '../runtime/triggers/email/store.ts';
import type { EnvConfig } from '../project/config.ts';
import { projectEnvironment } from '../project/project.ts';
import { ENTRY_METADATA } from '../cdk/metadata.ts';
import { EMAIL_INGRESS_ENTRY } from '../cdk/constructs/email-ingress.ts';
import { createTablesFromTemplate, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.ts';
import { stepTrail, type ExecutionRecord, type TrailStep } from './history.ts';
import { forkHistory, type ForkPoint } from './fork.ts';
import { recordedEmails, recordingPuts } from './recorded-emails.ts';
import { DEFAULT_STATE_DIRS } from './state-dirs.ts';
import { deadline, PauseStore, type PausedTask, type Resolution } from './pauses.ts';
import { pauseStateName, requiredActions, type CheckpointRequest } from '../definitions/workflow/pause.ts';
import { LocalRuntime, type LocalExecution, type LocalRuntimeOptions, type TaskHandler } from './runtime.ts';
import { synthProject } from './synth.ts';
import { resolveTokens } from './tokens.ts';

export type ModelChoice = 'offline' | 'bedrock' | 'openai';

/** `--model openai`: the OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server, LM Studio, a hosted API). */
export interface OpenAiEndpoint {
  readonly baseUrl: string;
  readonly model: string;
  /** @default the OPENAI_API_KEY environment variable, when set */
  readonly apiKey?: string;
}

export interface WorkflowSessionOptions {
  /** The workflow to run (a folder of `statemachines/`). */
  readonly workflow: string;
  /** Deployment environment to synthesize (`-c env=NAME`). @default 'dev' */
  readonly env?: string;
  /** `MODEL_PROVIDER` of every step: `bedrock` needs AWS credentials (checked before anything starts). @default 'offline' */
  readonly model?: ModelChoice;
  /** `model: 'openai'`: the endpoint every LLM step calls. */
  readonly openai?: OpenAiEndpoint;
  /** Added to every function's environment after the manifest's `local.env` (e.g. another registry file). @default none */
  readonly localEnv?: Readonly<Record<string, string>>;
  /** The outbox (`OUTBOX_FILE`, JSON lines) that tools sending messages write to. @default a file in a temporary folder, deleted by `close()` */
  readonly outboxFile?: string;
  /** Where executions are stored for `stepwise history`; `false` stores nothing. @default the local runtime's (`.stepwise/executions`) */
  readonly historyDir?: string | false;
  /** Where paused executions are kept (see `LocalRuntime`'s `pausesDir`). @default the runtime's */
  readonly pausesDir?: string | false;
  /** Where the bodies of emails the ingress receives are recorded, for forks of their executions; `false` records none. @default `.stepwise/emails` when `historyDir` is not `false` */
  readonly emailsDir?: string | false;
  /** `POWERTOOLS_LOG_LEVEL` of every function (`SILENT` for clean CLI output). @default the template's */
  readonly logLevel?: string;
  /** Adapters for every step handler (`createHandler(env, services)`): a model or toolbox stand-in. @default built from each function's environment */
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
}

/**
 * - `SUCCEEDED` / `FAILED`: the execution's status (timed out and aborted count as failed).
 * - `REJECTED`: the input was refused before anything ran (the email ingress refused the mail, or
 *   the input does not match the workflow's input schema); `reason` says why.
 * - `DUPLICATE`: a mail with the same Message-ID was already delivered in this session; nothing ran.
 * - `PAUSED`: the execution waits at a checkpoint (a step's `pause`) for `stepwise resume`; see `pause`.
 */
export type RunStatus = 'SUCCEEDED' | 'FAILED' | 'REJECTED' | 'DUPLICATE' | 'PAUSED';

/** One step of an execution's trail. */
export interface RunStep {
  name: string;
  /** The route the step chose; `null` when it failed. */
  next: string | null;
  decidedBy: DecidedBy | null;
  fields: Record<string, unknown>;
  /** Model calls and tokens of the step (zero for code steps); absent when it failed. */
  usage?: TokenUsage;
  /** Why the step failed (`<error name>: <message>`), when it did: the ASL caught it (to the fallback) or the execution ended. */
  error?: string;
  /** ASL retries of the step (attempts after the first), when there were any. */
  retries?: number;
}

export interface RunToolCall {
  step: string;
  tool: string;
  args: Record<string, unknown>;
  /** `null` when the call was refused or failed. */
  result: unknown;
  /** Why the call was refused (not allowed, bad arguments) or failed. */
  error?: string;
}

export interface OutboxMail {
  to: string;
  subject: string;
  body: string;
}

/** What happened to one input: the `stepwise run --json` contract (one object per input). */
export interface RunResult {
  file: string;
  /** Email inputs: the Message-ID header; `null` when the mail has none or could not be read. */
  messageId?: string | null;
  /** The execution; for a duplicate mail, the earlier one. `null` when nothing was started. */
  executionName: string | null;
  status: RunStatus;
  reason?: string;
  steps: RunStep[];
  /** The named outcome a succeeded execution ended in instead of `Done` (a manifest counter's, e.g. `IterationLimit`). */
  outcome?: string;
  toolCalls: RunToolCall[];
  /** Messages this execution sent (for an email workflow: to the verified sender only). */
  outbox: OutboxMail[];
  /** Model calls and tokens of the whole execution; present when it ran. */
  usage?: TokenUsage;
  /** The execution's output, when it succeeded. */
  output?: unknown;
  /** A `PAUSED` execution's checkpoint: what the resumer must do, and until when. */
  pause?: PauseSummary;
}

/** What `run`, `resume` and `executions` show of a paused execution. */
export function pauseSummary(task: PausedTask): PauseSummary {
  const request = (task.request ?? {}) as Partial<CheckpointRequest>;
  const due = deadline(task);
  return {
    execution: task.name,
    workflow: task.workflow ?? request.workflow ?? null,
    state: task.state,
    ...(typeof request.step === 'string' && { step: request.step }),
    ...(typeof request.next === 'string' && { next: request.next }),
    requiredActions: requiredActions(request),
    pausedAt: task.pausedAt,
    deadline: due?.at.toISOString() ?? null,
    resume: `stepwise resume ${task.name} --output '<JSON>'   (or --fail REASON)`,
  };
}

export interface PauseSummary {
  execution: string;
  workflow: string | null;
  /** The paused Task state (`<step>.pause`). */
  state: string;
  step?: string;
  next?: string;
  requiredActions: unknown;
  pausedAt: string;
  /** When it times out (the earlier of the timeout and the next heartbeat due), if it can. */
  deadline: string | null;
  resume: string;
}

/** The input file kinds `run --input` reads: one JSON object per `.json` file, one per line of a `.jsonl` file. */
const INPUT_EXTENSIONS = ['.json', '.jsonl'];

/**
 * The input files of `--input` / `--email` arguments, in order: a file as given, a directory as
 * every file with one of `extensions` in it (sorted by name).
 * @throws InvalidInputError for a path that does not exist or a folder without such files: nothing
 *   is started when an input is missing.
 */
export function expandInputPaths(paths: readonly string[], extensions: readonly string[] = INPUT_EXTENSIONS): string[] {
  return paths.flatMap((path) => {
    if (!existsSync(path)) throw new InvalidInputError(`input not found: ${path}`);
    if (!statSync(path).isDirectory()) return [path];
    const files = readdirSync(path)
      .filter((name) => extensions.includes(extname(name).toLowerCase()))
      .sort()
      .map((name) => join(path, name));
    if (files.length === 0) throw new InvalidInputError(`no inputs in ${path} (looked for ${extensions.map((e) => `*${e}`).join(', ')})`);
    return files;
  });
}

const describeError = (error: string, cause: string | undefined) => {
  const message = causeMessage(cause)?.split('\n')[0];
  return message ? `${error}: ${message}` : error;
};

/** A step Lambda's output, when the trail step has one. */
const stepOutput = (step: TrailStep): StepOutput | undefined =>
  step.output && typeof step.output === 'object' && 'toolCalls' in step.output ? (step.output as StepOutput) : undefined;

function runSteps(trail: TrailStep[]): RunStep[] {
  return trail.map((step) => {
    const out = stepOutput(step);
    return {
      name: step.name,
      next: out?.next ?? null,
      decidedBy: out?.decidedBy ?? null,
      fields: out?.fields ?? {},
      ...(out?.usage && { usage: out.usage }),
      ...(step.error && { error: describeError(step.error.error, step.error.cause) }),
      ...(step.retries > 0 && { retries: step.retries }),
    };
  });
}

function runToolCalls(trail: TrailStep[]): RunToolCall[] {
  return trail.flatMap((step) =>
    (stepOutput(step)?.toolCalls ?? []).map((call) => ({
      step: step.name,
      tool: call.tool,
      args: call.args,
      result: call.result ?? null,
      ...(call.error !== undefined && { error: call.error }),
    })),
  );
}

/**
 * The trail of a workflow's steps: Task states named as a step. A consensus step's samples and
 * tallies (Tasks inside its Map states, named `<step>.wave-N…`) are not steps: the step's own
 * Task records the vote and the samples' model use. A step's checkpoint (`<step>.pause`) stays in
 * the trail, so a paused or resumed run shows where it waited.
 */
export function workflowTrail(def: WorkflowDefinition, history: LocalExecution['history']): TrailStep[] {
  const shown = new Set(def.steps.flatMap((s) => (s.pause ? [s.name, pauseStateName(s.name)] : [s.name])));
  return stepTrail(history).filter((s) => shown.has(s.name));
}

/**
 * The named outcome a succeeded execution reached, when it is not `Done`: the terminal state it
 * ended in (a counter's outcome, e.g. `IterationLimit`), or a counter outcome it passed through on
 * its way to the step that answers it (counter `then`).
 */
function outcomeOf(def: WorkflowDefinition, history: LocalExecution['history']): string | undefined {
  const name = history.findLast((e) => e.type === 'SucceedStateEntered')?.stateEnteredEventDetails?.name;
  if (name !== undefined && name !== 'Done') return name;
  const answered = new Set(Object.values(def.manifest.counters).flatMap((c) => (c.then ? [c.outcome] : [])));
  return history.findLast((e) => e.type === 'PassStateEntered' && answered.has(e.stateEnteredEventDetails?.name ?? ''))?.stateEnteredEventDetails?.name;
}

/** The model use of an execution: every step's, added up. */
export function executionUsage(steps: readonly RunStep[]): TokenUsage {
  const total: TokenUsage = { modelCalls: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 };
  for (const { usage } of steps) if (usage) for (const key of Object.keys(total) as (keyof TokenUsage)[]) total[key] += usage[key];
  return total;
}

/** Why an execution failed: its error, and the failing step's message when the terminal state has none. */
function failureReason(execution: LocalExecution, trail: TrailStep[]): string {
  const error = execution.error?.Error ?? execution.status;
  const cause = execution.error?.Cause ?? trail.findLast((s) => s.error)?.error?.cause;
  return describeError(error, cause);
}

/**
 * Fail early, with one line, when `--model bedrock` has no credentials or region to call Bedrock
 * with (instead of every step failing into the fallback).
 */
async function assertBedrockAccess(): Promise<void> {
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region) throw new MissingCredentialsError('--model bedrock needs an AWS region: set AWS_REGION (e.g. us-east-1)');
  const client = new BedrockRuntimeClient({ region });
  try {
    await client.config.credentials();
  } catch (e) {
    const why = (e as Error).message.split('\n')[0];
    throw new MissingCredentialsError(
      `--model bedrock needs AWS credentials (set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY): ${why}`,
    );
  } finally {
    client.destroy();
  }
}

/** The manifest's `local.env`: a value that names a file of the workflow folder becomes its path. */
function manifestLocalEnv(def: WorkflowDefinition): Record<string, string> {
  return Object.fromEntries(
    Object.entries(def.manifest.local.env).map(([name, value]) => [name, existsSync(join(def.dir, value)) ? join(def.dir, value) : value]),
  );
}

/** The parsed inputs of one `.json` (one object) or `.jsonl` (one object per line) file, with how to name each in results. */
function readInputs(file: string): { label: string; value?: unknown; problem?: string }[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return [{ label: file, problem: `unreadable: ${(e as Error).message}` }];
  }
  const parse = (source: string, label: string) => {
    try {
      return { label, value: JSON.parse(source) as unknown };
    } catch (e) {
      return { label, problem: `not JSON: ${(e as Error).message}` };
    }
  };
  if (extname(file).toLowerCase() !== '.jsonl') return [parse(text, file)];
  return text
    .split('\n')
    .map((line, i) => ({ line, label: `${file}:${i + 1}` }))
    .filter(({ line }) => line.trim())
    .map(({ line, label }) => parse(line, label));
}

/** The email trigger's local ingress: configured from the ingress function's environment in the template. */
interface EmailIngressWiring {
  deps: IngestDeps;
  /** The address mail is sent to (the environment's first receiving address). */
  inbox: string;
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
  private readonly finished = new Map<string, LocalExecution>();
  /** Executions the email ingress started, until they end. */
  private readonly running = new Map<string, Promise<LocalExecution>>();
  private readonly email?: EmailIngressWiring;
  private readonly eventLog?: EventLog;
  private readonly onStart?: (name: string) => void;
  private closed?: Promise<void>;

  private constructor(
    readonly workflow: WorkflowDefinition,
    readonly runtime: LocalRuntime,
    readonly dynamo: DynamoDbLocal,
    readonly outboxFile: string,
    private readonly tempDir: string | undefined,
    wiring: { tables: Record<string, string>; ingress?: Record<string, string>; email?: EnvConfig['email']; clock: () => Date; emailsDir: string | false; onStart?: (name: string) => void },
  ) {
    this.tables = wiring.tables;
    this.onStart = wiring.onStart;
    if (wiring.tables.EVENTS_TABLE) this.eventLog = dynamoEventLog(dynamo.client, wiring.tables.EVENTS_TABLE);
    const { ingress } = wiring;
    const { email } = wiring;
    if (ingress?.EMAILS_TABLE && ingress.EVENTS_TABLE && email) {
      this.email = {
        inbox: email.recipients[0]!,
        deps: {
          emails: wiring.emailsDir
            ? recordingPuts(dynamoEmailStore(dynamo.client, ingress.EMAILS_TABLE), recordedEmails(wiring.emailsDir))
            : dynamoEmailStore(dynamo.client, ingress.EMAILS_TABLE),
          events: dynamoEventLog(dynamo.client, ingress.EVENTS_TABLE),
          starter: localStarter(runtime, workflow.manifest.name, (name, execution) => {
            this.running.set(name, execution);
            wiring.onStart?.(name);
          }),
          policy: {
            maxBytes: Number(ingress.MAX_MESSAGE_BYTES ?? DEFAULT_POLICY.maxBytes),
            maxBodyChars: Number(ingress.MAX_BODY_CHARS ?? DEFAULT_POLICY.maxBodyChars),
            requireAuthenticatedSender: ingress.REQUIRE_AUTHENTICATED_SENDER === 'true',
            // The ingress handler adds the SES envelope recipients to its own MAIL_FROM; locally they come from the config.
            ownAddresses: [ingress.MAIL_FROM ?? email.mailFrom, ...email.recipients].map((a) => a.toLowerCase()),
          },
          clock: wiring.clock,
        },
      };
    }
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
    if (model === 'bedrock') await assertBedrockAccess();
    if (model === 'openai' && !options.openai) throw new InvalidInputError('--model openai needs the endpoint: --openai-base-url URL --openai-model NAME (or OPENAI_BASE_URL and OPENAI_MODEL)');
    const apiKey = options.openai?.apiKey ?? process.env.OPENAI_API_KEY;

    const app = await synthProject(env);
    const machine = app.stateMachines.find((m) => m.workflowName === def.manifest.name);
    if (!machine) throw new LocalServiceError(`the ${env} app has no state machine for workflow ${def.manifest.name}`);
    const template = app.templates[machine.stack]!;
    const ctx = app.contexts[machine.stack]!;
    // Every function's environment as deployed: the table variables name the tables, the ingress's configures the local ingress.
    const environments = Object.values(template.Resources ?? {})
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => ({
        entry: r.Metadata?.[ENTRY_METADATA],
        variables: resolveTokens<Record<string, string>>((r.Properties?.Environment as { Variables?: unknown })?.Variables ?? {}, template, ctx),
      }));
    const tables = Object.fromEntries(environments.flatMap((f) => Object.entries(f.variables).filter(([k]) => k.endsWith('_TABLE'))));
    const ingress = environments.find((f) => f.entry === EMAIL_INGRESS_ENTRY)?.variables;
    if (isEmailWorkflow(def) && !ingress) throw new LocalServiceError(`stack ${machine.stack} has no email ingress function (${EMAIL_INGRESS_ENTRY})`);

    const tempDir = options.outboxFile ? undefined : mkdtempSync(join(tmpdir(), 'stepwise-session-'));
    const outboxFile = options.outboxFile ?? join(tempDir!, 'outbox.jsonl');
    let dynamo: DynamoDbLocal | undefined;
    try {
      dynamo = await startDynamoDbLocal();
      await createTablesFromTemplate(dynamo.client, template);
      const runtime = await LocalRuntime.create({
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
          ...(model === 'bedrock' ? { AWS_REGION: (process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION)! } : { EMBEDDINGS_PROVIDER: 'lexical' }),
          ...(model === 'openai' && { OPENAI_BASE_URL: options.openai!.baseUrl, OPENAI_MODEL: options.openai!.model, ...(apiKey && { OPENAI_API_KEY: apiKey }) }),
          ...(options.logLevel && { POWERTOOLS_LOG_LEVEL: options.logLevel }),
        },
      });
      const emailsDir = options.emailsDir ?? (options.historyDir === false ? false : DEFAULT_STATE_DIRS.emails);
      const { email } = await projectEnvironment(env, { allowPlaceholders: true });
      return new WorkflowSession(def, runtime, dynamo, outboxFile, tempDir, { tables, ingress, email, clock: options.clock ?? (() => new Date()), emailsDir, onStart: options.onStart });
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
  async runFiles(files: readonly string[], onResult?: (result: RunResult, index: number, total: number) => void): Promise<RunResult[]> {
    const jobs = files.flatMap((file) =>
      extname(file).toLowerCase() === '.eml' ? [() => this.deliverFile(file)] : readInputs(file).map((input) => () => this.runParsed(input)),
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

  private async runParsed({ label, value, problem }: { label: string; value?: unknown; problem?: string }, name: string = randomUUID()): Promise<RunResult> {
    const none = { executionName: null, steps: [], toolCalls: [], outbox: [] };
    if (problem) return { file: label, status: 'REJECTED', reason: problem, ...none };
    if (isEmailWorkflow(this.workflow)) {
      return { file: label, status: 'REJECTED', reason: `${this.workflow.manifest.name} starts from email: give .eml files`, ...none };
    }
    const checked = checkInput(this.workflow, value);
    if (checked.problem) return { file: label, status: 'REJECTED', reason: `input does not match the workflow's input schema: ${checked.problem}`, ...none };
    try {
      const started = this.runtime.startExecution(this.workflow.manifest.name, checked.input, { name });
      this.onStart?.(name);
      const execution = await started;
      this.finished.set(execution.name, execution);
      return this.report(label, execution);
    } catch (e) {
      return { file: label, status: 'FAILED', reason: describeError((e as Error).name, (e as Error).message), ...none, executionName: name };
    }
  }

  /** Deliver one `.eml` file through the email ingress. Never throws (see {@link runFiles}). */
  async deliverFile(file: string): Promise<RunResult> {
    let raw: Buffer;
    try {
      raw = readFileSync(file);
    } catch (e) {
      return { file, messageId: null, executionName: null, status: 'REJECTED', reason: `unreadable: ${(e as Error).message}`, steps: [], toolCalls: [], outbox: [] };
    }
    return this.deliverEmail(new Uint8Array(raw), file);
  }

  /**
   * Deliver one raw mail through the email ingress, as SES would (verdicts from the headers SES
   * adds), and report what happened. Never throws (see {@link runFiles}).
   * @param file how the result names the mail.
   */
  async deliverEmail(raw: Uint8Array | string, file: string): Promise<RunResult> {
    const parsed = await parseInbound(raw, { maxBytes: Number.MAX_SAFE_INTEGER });
    const messageId = (!isRejection(parsed) && parsed.messageId) || null;
    const none = { steps: [], toolCalls: [], outbox: [] };
    if (!this.email) {
      return { file, messageId, executionName: null, status: 'REJECTED', reason: `${this.workflow.manifest.name} has no email trigger: give JSON inputs`, ...none };
    }
    let executionName: string | null = null;
    try {
      const ingested = await ingest(raw, undefined, await localSesMessageId(raw), this.email.deps);
      executionName = ingested.executionName;
      const base = { file, messageId, executionName };
      if (ingested.status === 'REJECTED') return { ...base, status: 'REJECTED', reason: `${ingested.reason}: ${ingested.detail}`, ...none };
      if (ingested.status === 'DUPLICATE')
        return { ...base, status: 'DUPLICATE', reason: `the same mail (Message-ID) was already delivered as ${executionName}; nothing new ran`, ...none };
      const started = this.running.get(executionName);
      if (!started) throw new LocalServiceError(`execution ${executionName} was started but did not report back`);
      const execution = await started;
      this.finished.set(execution.name, execution);
      return this.report(file, execution, messageId);
    } catch (e) {
      // A fault of the local setup (DynamoDB Local gone, a broken handler module): report it on this input and go on.
      return { file, messageId, executionName, status: 'FAILED', reason: describeError((e as Error).name, (e as Error).message), ...none };
    }
  }

  private report(file: string, execution: LocalExecution, messageId?: string | null): RunResult {
    const trail = workflowTrail(this.workflow, execution.history);
    const outbox = readOutbox(this.outboxFile)
      .filter((mail) => mail.execution === execution.name)
      .map(({ to, subject, body }) => ({ to, subject, body }));
    const succeeded = execution.status === 'SUCCEEDED';
    const steps = runSteps(trail);
    const paused = execution.status === 'RUNNING' && execution.pause;
    return {
      file,
      ...(messageId !== undefined && { messageId }),
      executionName: execution.name,
      status: paused ? 'PAUSED' : succeeded ? 'SUCCEEDED' : 'FAILED',
      ...(paused ? { pause: pauseSummary(paused) } : !succeeded && { reason: failureReason(execution, trail) }),
      steps,
      toolCalls: runToolCalls(trail),
      outbox,
      usage: executionUsage(steps),
      ...(succeeded && outcomeOf(this.workflow, execution.history) !== undefined && { outcome: outcomeOf(this.workflow, execution.history) }),
      ...(succeeded && execution.output !== undefined && { output: execution.output }),
    };
  }

  /**
   * Resume an execution paused at a checkpoint (persisted by this or an earlier session) and
   * report it like `runInput`: it runs on until it ends or pauses again. An output sent after the
   * checkpoint's deadline resumes into the timeout path instead (`reason` says so).
   * @throws ExecutionDoesNotExist when no execution of that name is paused.
   */
  async resume(execution: string, resolution: Resolution, options: { now?: Date } = {}): Promise<RunResult> {
    this.onStart?.(execution);
    const resumed = await this.runtime.resumeExecution(execution, resolution, options);
    this.finished.set(resumed.name, resumed);
    const result = this.report(resumed.name, resumed);
    const late = resumed.resumedWith === 'timeout' && !('timeout' in resolution);
    return late ? { ...result, reason: `the checkpoint had timed out: the ${'output' in resolution ? 'output' : 'failure'} was not accepted and the timeout path ran` } : result;
  }

  /**
   * Fork `parent` (a recorded execution of this workflow, local or imported) at `point`: a new
   * execution named `name` runs the same ASL from the point's state with `state`, continuing the
   * parent's history before it, and is reported like `runInput`. Never throws for a failed run.
   */
  async fork(parent: ExecutionRecord, point: ForkPoint, state: unknown, name: string): Promise<RunResult> {
    this.onStart?.(name);
    const execution = await this.runtime.forkExecution(this.workflow.manifest.name, {
      state: point.entryState,
      stateInput: state,
      name,
      history: forkHistory(parent, point),
      executionInput: parent.input,
      parent: { execution: parent.name, step: point.step, index: point.index },
    });
    this.finished.set(execution.name, execution);
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
      await this.dynamo.stop();
      if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
    })());
  }
}

/**
 * `stepwise resume` (and Studio's approve/reject): resume a paused local execution in a new session
 * of its workflow, through the same synthesized ASL, and report it like `run`.
 * @throws ExecutionDoesNotExist when no execution of that name is paused; InvalidInputError when it is no Stepwise workflow's.
 */
export async function resumePaused(
  execution: string,
  resolution: Resolution,
  options: Pick<WorkflowSessionOptions, 'env' | 'model' | 'logLevel' | 'historyDir' | 'emailsDir' | 'onStart'> & { pausesDir?: string } = {},
): Promise<RunResult> {
  const paused = new PauseStore(options.pausesDir).get(execution);
  if (!paused) throw new ExecutionDoesNotExist({ $metadata: {}, message: `no paused local execution "${execution}" (stepwise executions lists them)` });
  if (!paused.workflow) throw new InvalidInputError(`${execution} is not an execution of a Stepwise workflow`);
  const session = await WorkflowSession.start({ ...options, workflow: paused.workflow });
  try {
    return await session.resume(execution, resolution);
  } finally {
    await session.close();
  }
}
