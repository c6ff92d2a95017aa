/**
 * A local session of the warranty agent: one DynamoDB Local, the tables of the synthesized
 * template, and the local runtime running the synthesized ASL. Inbound `.eml` files go through the
 * REAL ingress (`ingest` + `localStarter`), so screening, duplicate detection and the step
 * handlers are exactly what runs in AWS; results are read back from the execution history and the
 * outbox. Nothing of the workflow is implemented here.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { dynamoEmailStore } from '../../lambdas/triggers/email/store.ts';
import type { StepServices } from '../../lambdas/handlers/step.ts';
import { DEFAULT_POLICY, isRejection, localSesMessageId, parseInbound } from '../../lambdas/triggers/email/checks.ts';
import { ingest, type IngestDeps } from '../../lambdas/triggers/email/ingest.ts';
import { localStarter } from '../../lambdas/triggers/email/starter.ts';
import type { DecidedBy, StepOutput } from '../../lambdas/lib/contracts.ts';
import { InvalidInputError, LocalServiceError, MissingCredentialsError, causeMessage } from '../../lambdas/lib/errors.ts';
import { dynamoEventLog, type StepwiseEvent } from '../../lambdas/lib/event-log.ts';
import { STATEMACHINES_DIR } from '../../lambdas/lib/workflow/loader.ts';
import { readOutbox } from '../../lambdas/triggers/email/mail.ts';
import { jsonFileRegistry } from '../../lambdas/workflows/warranty-email/registry.ts';
import { getEnvConfig } from '../config.ts';
import { ENTRY_METADATA } from '../constructs/stepwise-function.ts';
import { createTablesFromTemplate, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.ts';
import { stepTrail, type TrailStep } from './history.ts';
import { LocalRuntime, type LocalExecution, type TaskHandler } from './runtime.ts';
import { synthProject } from './synth.ts';
import { resolveTokens } from './tokens.ts';

/** The workflow a session runs. */
export const WARRANTY_WORKFLOW = 'warranty-email';
/** The registry `stepwise run` and the demo use unless told otherwise. */
export const DEFAULT_REGISTRY_FILE = join(STATEMACHINES_DIR, WARRANTY_WORKFLOW, 'registry.json');
/** The sample emails of the demo: one per flow, a spam and an auto-reply. */
export const SAMPLES_DIR = join(STATEMACHINES_DIR, WARRANTY_WORKFLOW, 'samples');
/** The Lambda entry of the SES ingress; its environment in the template configures the local ingress. */
const INGRESS_ENTRY = 'lambdas/triggers/email/handler.ts';

export type ModelChoice = 'offline' | 'bedrock';

export interface WarrantySessionOptions {
  /** Deployment environment to synthesize (`-c env=NAME`). @default 'dev' */
  readonly env?: string;
  /** `MODEL_PROVIDER` of every step: `bedrock` needs AWS credentials (checked before anything starts). @default 'offline' */
  readonly model?: ModelChoice;
  /** The JSON warranty registry (`WARRANTY_REGISTRY_FILE`), checked when the session starts. @default DEFAULT_REGISTRY_FILE */
  readonly registryFile?: string;
  /** The outbox (`OUTBOX_FILE`, JSON lines) that `send_email` writes to. @default a file in a temporary folder, deleted by `close()` */
  readonly outboxFile?: string;
  /** Where executions are stored for `stepwise history`; `false` stores nothing. @default the local runtime's (`.stepwise/executions`) */
  readonly historyDir?: string | false;
  /** `POWERTOOLS_LOG_LEVEL` of every function (`SILENT` for clean CLI output). @default the template's */
  readonly logLevel?: string;
  /** Adapters for every step handler (`createHandler(env, services)`): a model or toolbox stand-in. @default built from each function's environment */
  readonly services?: StepServices;
  /** Replace Task states by name with scripted handlers (tests). */
  readonly handlerOverrides?: Record<string, TaskHandler>;
  /** Wait this long before every ASL retry instead of the manifest's backoff. @default the ASL's */
  readonly retryDelayMs?: number;
  /** The ingress clock (receipt time). @default () => new Date() */
  readonly clock?: () => Date;
}

export type EmailStatus = 'SUCCEEDED' | 'FAILED' | 'REJECTED' | 'DUPLICATE';

/** One step of an email's trail. */
export interface EmailStep {
  name: string;
  /** The route the step chose; `null` when it failed. */
  next: string | null;
  decidedBy: DecidedBy | null;
  fields: Record<string, unknown>;
  /** Why the step failed (`<error name>: <message>`), when it did: the ASL caught it (to the fallback) or the execution ended. */
  error?: string;
  /** ASL retries of the step (attempts after the first), when there were any. */
  retries?: number;
}

export interface EmailToolCall {
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

/**
 * What happened to one inbound email: the `stepwise run --json` contract.
 * - `SUCCEEDED` / `FAILED`: the execution's status (timed out and aborted count as failed).
 * - `REJECTED`: the ingress refused it, or the file could not be read; `reason` says why.
 * - `DUPLICATE`: a mail with the same Message-ID was already delivered in this session; nothing ran.
 */
export interface EmailResult {
  file: string;
  /** The Message-ID header; `null` when the mail has none or could not be read. */
  messageId: string | null;
  /** The execution (derived from the SES message id); for a duplicate, the earlier one. `null` when the file could not be read. */
  executionName: string | null;
  status: EmailStatus;
  reason?: string;
  steps: EmailStep[];
  toolCalls: EmailToolCall[];
  /** Mail this execution sent (to the verified sender only). */
  outbox: OutboxMail[];
}

/**
 * The email files of `--email` arguments, in order: a file as given, a directory as every `*.eml`
 * in it (sorted by name). Paths that are neither stay as given, so reading them reports them.
 */
export function expandEmailPaths(paths: readonly string[]): string[] {
  return paths.flatMap((path) => {
    const isDir = existsSync(path) && statSync(path).isDirectory();
    if (!isDir) return [path];
    return readdirSync(path)
      .filter((name) => name.toLowerCase().endsWith('.eml'))
      .sort()
      .map((name) => join(path, name));
  });
}

const describeError = (error: string, cause: string | undefined) => {
  const message = causeMessage(cause)?.split('\n')[0];
  return message ? `${error}: ${message}` : error;
};

/** A step Lambda's output, when the trail step has one. */
const stepOutput = (step: TrailStep): StepOutput | undefined =>
  step.output && typeof step.output === 'object' && 'toolCalls' in step.output ? (step.output as StepOutput) : undefined;

function emailSteps(trail: TrailStep[]): EmailStep[] {
  return trail.map((step) => {
    const out = stepOutput(step);
    return {
      name: step.name,
      next: out?.next ?? null,
      decidedBy: out?.decidedBy ?? null,
      fields: out?.fields ?? {},
      ...(step.error && { error: describeError(step.error.error, step.error.cause) }),
      ...(step.retries > 0 && { retries: step.retries }),
    };
  });
}

function toolCalls(trail: TrailStep[]): EmailToolCall[] {
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

/** Fail early, with one line, on a registry file that is missing or not a registry (not on the first lookup). */
async function assertRegistry(file: string): Promise<void> {
  try {
    await jsonFileRegistry(file).lookup('');
  } catch (e) {
    const detail = e instanceof Error && e.name === 'ZodError' ? 'not an array of { serial, product, warrantyEnd }' : (e as Error).message;
    throw new InvalidInputError(`registry ${file}: ${detail.replace(/\s*\n\s*/g, ' ')}`);
  }
}

/**
 * A local session of the warranty-email agent.
 *
 * @example
 * const session = await WarrantySession.start({ model: 'offline' });
 * try {
 *   const results = await session.processFiles(['statemachines/warranty-email/samples']);
 * } finally {
 *   await session.close();
 * }
 */
export class WarrantySession {
  /** Table names by the environment variable the functions read them from (`EVENTS_TABLE`, `TICKETS_TABLE`, ...). */
  readonly tables: Readonly<Record<string, string>>;
  /** The address mail is sent to (the environment's first receiving address). */
  readonly inbox: string;
  private readonly finished = new Map<string, LocalExecution>();
  private readonly ingestDeps: IngestDeps;
  private closed?: Promise<void>;

  private constructor(
    readonly runtime: LocalRuntime,
    readonly dynamo: DynamoDbLocal,
    readonly outboxFile: string,
    private readonly tempDir: string | undefined,
    wiring: { tables: Record<string, string>; ingress: Record<string, string>; ownAddresses: string[]; inbox: string; clock: () => Date },
  ) {
    const { ingress } = wiring;
    this.tables = wiring.tables;
    this.inbox = wiring.inbox;
    this.ingestDeps = {
      emails: dynamoEmailStore(dynamo.client, ingress.EMAILS_TABLE!),
      events: dynamoEventLog(dynamo.client, ingress.EVENTS_TABLE!),
      starter: localStarter(runtime, WARRANTY_WORKFLOW, (execution) => this.finished.set(execution.name, execution)),
      policy: {
        maxBytes: Number(ingress.MAX_MESSAGE_BYTES ?? DEFAULT_POLICY.maxBytes),
        maxBodyChars: Number(ingress.MAX_BODY_CHARS ?? DEFAULT_POLICY.maxBodyChars),
        ownAddresses: wiring.ownAddresses,
      },
      clock: wiring.clock,
    };
  }

  /**
   * Synthesize the app, start DynamoDB Local with the template's tables, and prepare the runtime.
   * @throws MissingCredentialsError for `model: 'bedrock'` without credentials or region (before anything starts).
   * @throws InvalidInputError for a registry file that cannot be read.
   */
  static async start(options: WarrantySessionOptions = {}): Promise<WarrantySession> {
    const env = options.env ?? 'dev';
    const model = options.model ?? 'offline';
    if (model === 'bedrock') await assertBedrockAccess();
    const registryFile = options.registryFile ?? DEFAULT_REGISTRY_FILE;
    await assertRegistry(registryFile);

    const app = synthProject(env);
    const machine = app.stateMachines.find((m) => m.workflowName === WARRANTY_WORKFLOW);
    if (!machine) throw new LocalServiceError(`the ${env} app has no ${WARRANTY_WORKFLOW} state machine`);
    const template = app.templates[machine.stack]!;
    const ctx = app.contexts[machine.stack]!;
    // Every function's environment as deployed: the ingress configures the local ingress, the table variables name the tables.
    const environments = Object.entries(template.Resources ?? {})
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .map(([, r]) => ({
        entry: r.Metadata?.[ENTRY_METADATA],
        variables: resolveTokens<Record<string, string>>((r.Properties?.Environment as { Variables?: unknown })?.Variables ?? {}, template, ctx),
      }));
    const ingress = environments.find((f) => f.entry === INGRESS_ENTRY)?.variables;
    if (!ingress?.EMAILS_TABLE || !ingress.EVENTS_TABLE)
      throw new LocalServiceError(`stack ${machine.stack} has no email ingress function (${INGRESS_ENTRY}) with EMAILS_TABLE and EVENTS_TABLE`);
    const tables = Object.fromEntries(environments.flatMap((f) => Object.entries(f.variables).filter(([k]) => k.endsWith('_TABLE'))));
    const { email } = getEnvConfig(env);
    // The ingress handler adds the SES envelope recipients to its own MAIL_FROM; locally they come from the config.
    const ownAddresses = [ingress.MAIL_FROM ?? email.mailFrom, ...email.recipients].map((a) => a.toLowerCase());

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
        retryDelayMs: options.retryDelayMs,
        // The runtime gives functions dummy credentials when it knows the DynamoDB endpoint; Bedrock needs the real ones.
        ...(model === 'offline' && { dynamo: { endpoint: dynamo.endpoint } }),
        extraEnv: {
          MODEL_PROVIDER: model,
          WARRANTY_REGISTRY_FILE: registryFile,
          OUTBOX_FILE: outboxFile,
          AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
          ...(model === 'bedrock' && { AWS_REGION: (process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION)! }),
          ...(options.logLevel && { POWERTOOLS_LOG_LEVEL: options.logLevel }),
        },
      });
      return new WarrantySession(runtime, dynamo, outboxFile, tempDir, {
        tables,
        ingress,
        ownAddresses,
        inbox: email.recipients[0]!,
        clock: options.clock ?? (() => new Date()),
      });
    } catch (e) {
      await dynamo?.stop();
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
      throw e;
    }
  }

  /**
   * Process email files (directories: every `*.eml`, sorted) one after the other, in order. Never
   * throws for one email: an unreadable file is `REJECTED`, an unexpected error `FAILED`, each
   * with a reason.
   * @param onResult called as each email finishes (progress display).
   */
  async processFiles(paths: readonly string[], onResult?: (result: EmailResult, index: number, total: number) => void): Promise<EmailResult[]> {
    const files = expandEmailPaths(paths);
    const results: EmailResult[] = [];
    for (const [i, file] of files.entries()) {
      const result = await this.processFile(file);
      results.push(result);
      onResult?.(result, i, files.length);
    }
    return results;
  }

  /** Process one email file. Never throws (see {@link processFiles}). */
  async processFile(file: string): Promise<EmailResult> {
    let raw: Buffer;
    try {
      raw = readFileSync(file);
    } catch (e) {
      const error = e as NodeJS.ErrnoException;
      return { file, messageId: null, executionName: null, status: 'REJECTED', reason: `unreadable: ${error.message}`, steps: [], toolCalls: [], outbox: [] };
    }
    return this.processRaw(new Uint8Array(raw), file);
  }

  /**
   * Deliver one raw mail through the ingress, as SES would (verdicts from the headers SES adds),
   * and report what happened. Never throws (see {@link processFiles}).
   * @param file how the result names the mail.
   */
  async processRaw(raw: Uint8Array | string, file: string): Promise<EmailResult> {
    const parsed = await parseInbound(raw, { maxBytes: Number.MAX_SAFE_INTEGER });
    const messageId = (!isRejection(parsed) && parsed.messageId) || null;
    const none = { steps: [], toolCalls: [], outbox: [] };
    let executionName: string | null = null;
    try {
      const ingested = await ingest(raw, undefined, await localSesMessageId(raw), this.ingestDeps);
      executionName = ingested.executionName;
      const base = { file, messageId, executionName };
      if (ingested.status === 'REJECTED') return { ...base, status: 'REJECTED', reason: `${ingested.reason}: ${ingested.detail}`, ...none };
      if (ingested.status === 'DUPLICATE')
        return { ...base, status: 'DUPLICATE', reason: `the same mail (Message-ID) was already delivered as ${executionName}; nothing new ran`, ...none };
      const execution = this.finished.get(executionName);
      if (!execution) throw new LocalServiceError(`execution ${executionName} was started but did not report back`);
      const trail = stepTrail(execution.history);
      const outbox = readOutbox(this.outboxFile)
        .filter((mail) => mail.execution === executionName)
        .map(({ to, subject, body }) => ({ to, subject, body }));
      const succeeded = execution.status === 'SUCCEEDED';
      return {
        ...base,
        status: succeeded ? 'SUCCEEDED' : 'FAILED',
        ...(!succeeded && { reason: failureReason(execution, trail) }),
        steps: emailSteps(trail),
        toolCalls: toolCalls(trail),
        outbox,
      };
    } catch (e) {
      // A fault of the local setup (DynamoDB Local gone, a broken handler module): report it on this email and go on.
      return { file, messageId, executionName, status: 'FAILED', reason: describeError((e as Error).name, (e as Error).message), ...none };
    }
  }

  /** The finished execution of this session with this name. */
  execution(name: string): LocalExecution | undefined {
    return this.finished.get(name);
  }

  /** The event log of one execution, oldest first. */
  events(executionName: string): Promise<StepwiseEvent[]> {
    return this.ingestDeps.events.list(executionName);
  }

  /** Stop DynamoDB Local (its data is gone) and delete the temporary outbox. Idempotent. */
  close(): Promise<void> {
    return (this.closed ??= (async () => {
      await this.dynamo.stop();
      if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
    })());
  }
}
