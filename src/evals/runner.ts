/**
 * The eval runner, for any workflow: every case runs on the synthesized ASL with
 * the real step handlers in one local session. An email case becomes a real `.eml` delivered
 * through the email ingress; a `payload` case is the execution input, started directly. The
 * case's `mock_function_responses` answer its tool calls (argument-checked against the workflow's
 * real tool definitions by `mockToolbox`); the step trail and tool calls come back from the
 * execution history and are judged by the step validator.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidInputError } from '../core/errors.ts';
import { relPath } from '../definitions/definition-file.ts';
import { type EvalCase, loadTransitionRules, type TransitionRule } from '../definitions/eval-cases.ts';
import { calledWorkflows } from '../definitions/workflow/constructs/workflow-step.ts';
import { parentExecutionArn } from '../local/asl/child-executions.ts';
import { type TrailStep, writeLocalExecution } from '../local/records/history.ts';
import { mockToolbox } from '../local/records/mock-toolbox.ts';
import { exportExecution } from '../local/records/otlp.ts';
import type { Resolution } from '../local/records/pauses.ts';
import {
  type ModelChoice,
  type OpenAiEndpoint,
  type RunResult,
  type RunStep,
  WorkflowSession,
  type WorkflowSessionOptions,
  workflowTrail,
} from '../local/sessions/workflow-session.ts';
import { projectEnvironment } from '../project/project.ts';
import type { ModelProvider } from '../runtime/contracts/model-port.ts';
import type { StepOutput, ToolCallRecord } from '../runtime/contracts/step.ts';
import { loadPlugin, type WorkflowPlugin } from '../runtime/plugin.ts';
import type { StepServices } from '../runtime/step-handler/handler.ts';
import type { CallContext, Toolbox } from '../runtime/tools/types.ts';
import {
  RECORDINGS_DIR,
  type ReplayMiss,
  ReplayModel,
  recordedModels,
  recordingModel,
  replayMissMessage,
} from './recordings.ts';
import {
  type ActualStep,
  constructResults,
  type EvalFailure,
  FAILED_STEP,
  validateCase,
  validateProcessingTime,
} from './validator.ts';

/** One case's outcome (`stepwise eval --json` → `cases[]`). */
export interface EvalCaseResult {
  id: string;
  passed: boolean;
  /** Wall-clock time of the case (all its turns), ms. */
  durationMs?: number;
  /** The first diverging step's failed assertions, then whole-execution failures. */
  failures: EvalFailure[];
  /** The steps that ran, as `stepwise run` reports them. */
  steps: RunStep[];
  /** The kept history of the execution judged (`stepwise history <name>`), when the run keeps them (`keep`). */
  execution?: string;
}

/** `stepwise eval --json`. */
export interface EvalReport {
  /** What the run used: the provider (`replay`: from recordings), the model, the mode. */
  run?: EvalRunInfo;
  passed: number;
  failed: number;
  total: number;
  cases: EvalCaseResult[];
  /**
   * `--replay`: the requests that were never recorded, one line each (their cases failed with
   * them). Absent when none.
   */
  replayMisses?: string[];
}

/** The label of a run, for `--compare` and JUnit. */
export interface EvalRunInfo {
  workflow: string;
  provider: string;
  model: string | null;
  /** `monolithic`: the single-prompt agent (the name recorded reports keep). */
  mode: 'step' | 'monolithic';
}

export interface EvalRunOptions {
  /** @default 'offline' */
  model?: ModelChoice;
  /** `model: 'openai'`: the endpoint. */
  openai?: OpenAiEndpoint;
  /**
   * `record`: keep every model request and response in the workflow's `recordings/` (with a real
   * model); `replay`: answer every model call from there, offline; a request that was never
   * recorded fails its case (named in the case's failures and in `replayMisses`). @default neither
   */
  recordings?: 'record' | 'replay';
  /** Deployment environment to synthesize. @default 'dev' */
  env?: string;
  /** The OTLP/HTTP traces URL each case's executions are exported to as OpenTelemetry traces. @default none */
  otlp?: string;
  /** Called as each case finishes (progress display). */
  onCase?: (result: EvalCaseResult, index: number, total: number) => void;
  /** Told what replay skipped or could not read (a stray file, a bad recording, named by file and line). @default ignored */
  onWarning?: (message: string) => void;
  /**
   * Keep the history of every execution the cases run in `dir` (where `stepwise history` reads them), named by
   * the run and the case (`evalExecutionName`); each case's result names the one it was judged on. The session
   * runs them under names that are the same on every run (recorded requests may show them). @default kept nowhere
   */
  keep?: { dir: string; runId: string };
  /** Session settings: the CLI silences logs. Histories are not stored unless `historyDir` is given. */
  session?: Partial<Pick<WorkflowSessionOptions, 'historyDir' | 'logLevel' | 'retryDelayMs' | 'localEnv'>>;
}

/** The Message-ID of a case's email: it names the case inside the session. */
const messageIdOf = (evalCase: EvalCase) => `<${evalCase.scenario_id}@eval.stepwise.local>`;

/** A header value as RFC 2047 UTF-8 encoded-word when it is not plain ASCII. */
const headerText = (text: string) =>
  /^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;

/**
 * The case's email as raw MIME: From (with the display name), To the session's inbox, Subject,
 * a Message-ID derived from the scenario id, the case's extra headers, and a UTF-8 text body.
 */
export function evalEmail(evalCase: EvalCase, to: string, date: Date = new Date()): string {
  const { from, from_name, subject, body, headers = {}, attachments = [] } = evalCase.input.email!;
  const sender = from_name
    ? `${/^[\x20-\x7e]*$/.test(from_name) ? `"${from_name.replace(/["\\]/g, '\\$&')}"` : headerText(from_name)} <${from}>`
    : from;
  return [
    `From: ${sender}`,
    `To: ${to}`,
    `Subject: ${headerText(subject)}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: ${messageIdOf(evalCase)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'MIME-Version: 1.0',
    ...(attachments.length ? multipart(body, attachments) : textPart(body)),
  ].join('\r\n');
}

const textPart = (body: string) => [
  'Content-Type: text/plain; charset=UTF-8',
  'Content-Transfer-Encoding: 8bit',
  '',
  body,
];

/** The body and each attachment (`bytes` filler bytes, base64) as a multipart/mixed message. */
function multipart(body: string, attachments: { name: string; contentType: string; bytes: number }[]): string[] {
  const boundary = '=_stepwise_eval';
  const quoted = (name: string) => `"${headerText(name).replace(/["\\]/g, '\\$&')}"`;
  return [
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    ...textPart(body),
    ...attachments.flatMap((a) => [
      `--${boundary}`,
      `Content-Type: ${a.contentType}; name=${quoted(a.name)}`,
      `Content-Disposition: attachment; filename=${quoted(a.name)}`,
      'Content-Transfer-Encoding: base64',
      '',
      ...(Buffer.alloc(a.bytes, 0x2e)
        .toString('base64')
        .match(/.{1,76}/g) ?? []),
    ]),
    `--${boundary}--`,
    '',
  ];
}

/** A tool call the case's mocks answered, with where it was made. */
interface MadeCall {
  execution: string;
  step: string;
  call: ToolCallRecord;
}

const sameCall = (a: ToolCallRecord, b: ToolCallRecord) =>
  a.tool === b.tool && JSON.stringify(a.args) === JSON.stringify(b.args);

/**
 * What the validator judges: each step's output. A step that failed is kept, with its error as
 * the reason (`reported` is the same trail as `stepwise run` shows it) and the tool calls it made
 * before it failed: a failed step returns no output, so they come from the calls the case's mocks
 * answered (`made`) that no successful step reported.
 */
function actualSteps(trail: TrailStep[], reported: RunStep[], made: MadeCall[]): ActualStep[] {
  const unreported = [...made];
  const outputs = trail.map((step) => {
    const out = step.output as StepOutput | undefined;
    return out && typeof out === 'object' && Array.isArray(out.toolCalls) ? out : undefined;
  });
  for (const [i, out] of outputs.entries())
    for (const call of out?.toolCalls ?? []) {
      const at = unreported.findIndex((m) => m.step === trail[i]!.name && sameCall(m.call, call));
      if (at >= 0) unreported.splice(at, 1);
    }
  return trail.map((step, i) => {
    const out = outputs[i];
    if (out) {
      const { next, reason, fields, toolCalls, reply } = out;
      return { step: step.name, next, reason, fields, toolCalls, ...(reply !== undefined && { reply }) };
    }
    const toolCalls = unreported.filter((m) => m.step === step.name).map((m) => m.call);
    unreported.splice(0, unreported.length, ...unreported.filter((m) => m.step !== step.name));
    return {
      step: step.name,
      next: FAILED_STEP,
      reason: `the step failed: ${reported[i]?.error ?? 'no output'}`,
      fields: {},
      toolCalls,
    };
  });
}

/** Failures of the whole run of a case: nothing started, or the execution ended otherwise than expected. */
export function outcomeFailures(evalCase: EvalCase, result: RunResult): EvalFailure[] {
  const { status, error } = evalCase.expected_output;
  const actual = `${result.status}${result.reason ? ` (${result.reason})` : ''}`;
  const at = { index: null, step: null, actual };
  if (result.status === 'REJECTED' || result.status === 'DUPLICATE')
    return [{ ...at, expected: 'an execution starts', why: `the case did not start: ${result.reason}` }];
  if (result.status === 'PAUSED' && status !== 'PAUSED')
    return [
      {
        ...at,
        expected: status,
        why: 'the execution is still paused at a checkpoint (resume it with input.checkpoints)',
      },
    ];
  if (result.status !== status)
    return [
      {
        ...at,
        expected: status,
        why:
          status === 'SUCCEEDED'
            ? `the execution failed: ${result.reason}`
            : `the execution ${result.status.toLowerCase()}`,
      },
    ];
  // A failure reason starts with the execution's error name (`MaxStepsExceeded: ...`).
  if (error && !(result.reason ?? '').startsWith(error))
    return [{ ...at, expected: `FAILED with ${error}`, why: `the execution failed with another error` }];
  const { outcome } = evalCase.expected_output;
  if (outcome !== undefined && result.outcome !== outcome)
    return [
      {
        ...at,
        actual: `${result.status} in ${result.outcome ?? 'Done'}`,
        expected: `SUCCEEDED in ${outcome}`,
        why: `the execution ended in ${result.outcome ?? 'Done'}`,
      },
    ];
  return [];
}

/** Resume each checkpoint the case's execution pauses at, in order, as the case says; a checkpoint left over fails the case (it stays PAUSED). */
async function resumeCheckpoints(session: WorkflowSession, evalCase: EvalCase, result: RunResult): Promise<RunResult> {
  for (const checkpoint of evalCase.input.checkpoints) {
    if (result.status !== 'PAUSED' || result.executionName === null) break;
    const resolution: Resolution =
      'output' in checkpoint
        ? { output: checkpoint.output ?? null }
        : 'fail' in checkpoint
          ? { error: checkpoint.error, cause: checkpoint.fail }
          : { timeout: true };
    result = { ...(await session.resume(result.executionName, resolution)), file: result.file };
  }
  return result;
}

/**
 * Run a workflow's eval cases in one local session, one after the other, and validate each.
 * @throws MissingCredentialsError for `model: 'bedrock'` without AWS credentials (before anything starts).
 * @example
 * const report = await runEvalCases('support-desk', loadEvalCases(loadWorkflow('support-desk').dir), { onCase: (r) => console.error(r.id, r.passed) });
 */
export async function runEvalCases(
  workflow: string,
  cases: readonly EvalCase[],
  options: EvalRunOptions = {},
): Promise<EvalReport> {
  const { tools: own, def } = await loadPlugin(workflow);
  // The workflows it starts as steps run in the session: their tools answer the case's mocks too.
  let tools = own;
  for (const child of calledWorkflows(def)) tools = { ...(await loadPlugin(child)).tools, ...tools };
  const rules = loadTransitionRules(def);
  const routing = caseRouting(tools);
  const model = options.model ?? 'offline';
  const dir = join(def.dir, RECORDINGS_DIR);
  const replay = replayModel(workflow, model, dir, options.recordings);
  const services: StepServices = {
    toolbox: routing.toolbox,
    ...(replay && { model: replay }),
    ...(options.recordings === 'record' && { wrapModel: (m: ModelProvider) => recordingModel(m, dir) }),
  };
  const session = await WorkflowSession.start({
    historyDir: false,
    ...options.session,
    workflow,
    env: options.env,
    model: replay ? 'offline' : model,
    ...(options.openai && { openai: options.openai }),
    services,
    // Recorded requests must be the same on every run: the receipt time of a case's email is fixed.
    ...(options.recordings && { clock: () => RECORDED_CLOCK }),
  });
  const results: EvalCaseResult[] = [];
  try {
    for (const [i, evalCase] of cases.entries()) {
      const mocks = mockToolbox(tools, evalCase.input.mock_function_responses);
      const executions: string[] = [];
      const run = { routing, mocks, rules, recorded: Boolean(options.recordings), executions };
      const missed = replay?.misses.length ?? 0;
      let result = withReplayMisses(await runCase(session, evalCase, run), replay?.misses.slice(missed) ?? []);
      await exportCase(options.otlp, session, executions);
      const kept = options.keep && keepCase(session, evalCase.scenario_id, executions, options.keep);
      if (kept) result = { ...result, execution: kept };
      results.push(result);
      options.onCase?.(result, i, cases.length);
    }
  } finally {
    await session.close();
  }
  const passed = results.filter((r) => r.passed).length;
  const run: EvalRunInfo = {
    workflow,
    provider: replay ? `replay (${recordedModels(dir, options.onWarning).join(', ') || 'no recordings'})` : model,
    model:
      model === 'openai'
        ? (options.openai?.model ?? null)
        : model === 'bedrock'
          ? ((await projectEnvironment(options.env ?? 'dev', { allowPlaceholders: true })).modelId ??
            def.manifest.model.id)
          : null,
    mode: 'step',
  };
  const misses = [...new Set(replay?.misses.map(replayMissMessage))];
  return {
    run,
    passed,
    failed: results.length - passed,
    total: results.length,
    cases: results,
    ...(misses.length > 0 && { replayMisses: misses }),
  };
}

/** A case during which replay met requests never recorded: failed, each miss named (once) in its failures. */
function withReplayMisses(result: EvalCaseResult, misses: readonly ReplayMiss[]): EvalCaseResult {
  if (misses.length === 0) return result;
  const seen = new Set<string>();
  const failures: EvalFailure[] = misses
    .filter((m) => !seen.has(`${m.step}/${m.hash}`) && seen.add(`${m.step}/${m.hash}`))
    .map((m) => ({
      index: null,
      step: m.step,
      expected: 'a recorded answer',
      actual: `no recording ${m.hash.slice(0, 12)}`,
      why: replayMissMessage(m),
    }));
  return { ...result, passed: false, failures: [...failures, ...result.failures] };
}

/** How the session's tool calls reach the mocks of the case that made them. */
interface CaseRouting {
  /** The session's toolbox: it answers each call with the mocks of the case its execution runs. */
  toolbox: Toolbox;
  /** The mocks of each case, by execution name (an email case: by its Message-ID). */
  byCase: Map<string, Toolbox>;
  /** Every call the mocks answered, in order. */
  made: MadeCall[];
}

/** Each case's tool calls go to its own mocks, found by the execution's name (an email case: its Message-ID). */
function caseRouting(tools: WorkflowPlugin['tools']): CaseRouting {
  const byCase = new Map<string, Toolbox>();
  const made: MadeCall[] = [];
  // A child execution (a workflow step) answers with its parent's case.
  const caseOf = (ctx: CallContext) =>
    byCase.get(ctx.execution.name) ??
    byCase.get(String((ctx.input.email as { messageId?: unknown } | undefined)?.messageId)) ??
    byCase.get(String(parentExecutionArn(ctx.input)?.split(':').pop()));
  const toolbox: Toolbox = {
    spec: (name) => (Object.hasOwn(tools, name) ? tools[name] : undefined),
    execute: async (name, args, ctx) => {
      const call = (await caseOf(ctx)?.execute(name, args, ctx)) ?? {
        tool: name,
        args: {},
        error: `no eval case runs as execution ${ctx.execution.name}`,
      };
      made.push({ execution: ctx.execution.name, step: ctx.step, call });
      return call;
    },
  };
  return { toolbox, byCase, made };
}

/**
 * The model that answers from the recordings `dir` with `replay`.
 * @throws InvalidInputError for a recording run without a real model, or a replay without recordings.
 */
function replayModel(
  workflow: string,
  model: ModelChoice,
  dir: string,
  recordings: EvalRunOptions['recordings'],
): ReplayModel | undefined {
  if (recordings === 'record' && model === 'offline')
    throw new InvalidInputError(
      "--record keeps a real model's answers: choose one with --model bedrock or --model openai (the offline stand-in is deterministic already)",
    );
  if (recordings === 'replay' && !existsSync(dir))
    throw new InvalidInputError(`--replay: ${workflow} has no recordings (${relPath(dir)}): make them with --record`);
  return recordings === 'replay' ? new ReplayModel(dir) : undefined;
}

/** What one case runs with: the routing of the session's tool calls, its own mocks, whether the clock is fixed. */
interface CaseRun {
  routing: CaseRouting;
  mocks: Toolbox;
  /** The workflow's transition rules, checked on every case. */
  rules: readonly TransitionRule[];
  recorded: boolean;
  /** The names of the executions the case started, in order (its turns). */
  executions: string[];
}

/** The case's executions as traces to the collector at `url` (none without one). */
async function exportCase(url: string | undefined, session: WorkflowSession, executions: readonly string[]) {
  if (!url) return;
  for (const name of executions) {
    const record = session.execution(name);
    if (record) await exportExecution(url, record, session.workflow);
  }
}

/**
 * The name a case's execution is kept under: `eval-<run id>-<case>`, and `-t<n>` for the turns of a conversation.
 * @example evalExecutionName('2026-03-14T10-00-00.000Z', 'refund_valid_001') // 'eval-2026-03-14T10-00-00.000Z-refund_valid_001'
 */
export const evalExecutionName = (runId: string, caseId: string, turn?: number): string =>
  `eval-${runId}-${caseId}${turn === undefined ? '' : `-t${turn}`}`;

/** Store the case's executions under their names in the run (`keep`); the name of the last one, the one judged. */
function keepCase(
  session: WorkflowSession,
  caseId: string,
  executions: readonly string[],
  keep: NonNullable<EvalRunOptions['keep']>,
): string | undefined {
  let kept: string | undefined;
  for (const [t, ran] of executions.entries()) {
    const execution = session.execution(ran);
    if (!execution) continue;
    const { history, pause, resumedWith, ...record } = execution;
    const name = evalExecutionName(keep.runId, caseId, executions.length > 1 ? t + 1 : undefined);
    writeLocalExecution({ ...record, name, executionArn: record.executionArn.replace(/[^:]+$/, name) }, keep.dir);
    kept = name;
  }
  return kept;
}

/** Run one case to its end (its turns, its checkpoints) and judge its outcome and steps. */
async function runCase(session: WorkflowSession, evalCase: EvalCase, run: CaseRun): Promise<EvalCaseResult> {
  const started = Date.now();
  const turns = evalCase.input.email
    ? { last: await deliverCase(session, evalCase, run), failures: [] }
    : await runTurns(session, evalCase, run);
  let delivered = await resumeCheckpoints(session, evalCase, turns.last);
  const execution = delivered.executionName !== null ? session.execution(delivered.executionName) : undefined;
  // Checkpoint Tasks (`<step>.pause`) are in the trail but are no steps: the case judges steps.
  const isStep = (name: string) => session.workflow.steps.some((s) => s.name === name);
  delivered = { ...delivered, steps: delivered.steps.filter((s) => isStep(s.name)) };
  const calls = run.routing.made.filter((m) => m.execution === delivered.executionName);
  const trail = execution ? workflowTrail(session.workflow, execution.history).filter((s) => isStep(s.name)) : [];
  const steps = execution ? actualSteps(trail, delivered.steps, calls) : [];
  const constructs = constructResults(session.workflow, trail);
  const failures = [
    ...turns.failures,
    ...outcomeFailures(evalCase, delivered),
    ...(execution ? validateCase(evalCase, steps, run.rules, constructs).failures : []),
  ];
  const durationMs = Date.now() - started;
  failures.push(...validateProcessingTime(evalCase, durationMs).failures);
  return { id: evalCase.scenario_id, passed: failures.length === 0, durationMs, failures, steps: delivered.steps };
}

/** The name a case's input shows in the session (`<scenario>.eml` or `.json`). */
const caseLabel = (evalCase: EvalCase) => `${evalCase.scenario_id}${evalCase.input.email ? '.eml' : '.json'}`;

/** An email case: its mail delivered through the email ingress. */
async function deliverCase(session: WorkflowSession, evalCase: EvalCase, run: CaseRun): Promise<RunResult> {
  run.routing.byCase.set(messageIdOf(evalCase), run.mocks);
  const email = evalEmail(evalCase, session.inbox ?? 'inbox@stepwise.local', run.recorded ? RECORDED_CLOCK : undefined);
  const result = await session.deliverEmail(email, caseLabel(evalCase));
  if (result.executionName) run.executions.push(result.executionName);
  return result;
}

/**
 * A payload case: a conversation runs its turns in order with the same mocks (and tool ports); the
 * last turn is the one judged, an earlier turn that did not succeed is a failure of the case.
 */
async function runTurns(
  session: WorkflowSession,
  evalCase: EvalCase,
  run: CaseRun,
): Promise<{ last: RunResult; failures: EvalFailure[] }> {
  const failures: EvalFailure[] = [];
  const inputs = evalCase.input.turns ?? [evalCase.input.payload!];
  const label = caseLabel(evalCase);
  const runTurn = (payload: Record<string, unknown>, t: number) => {
    // Named by the case (and turn), so a turn's prompt, which may show its execution's name, is the same on every run.
    const name = `${evalCase.scenario_id}${inputs.length > 1 ? `-t${t + 1}` : ''}`;
    run.routing.byCase.set(name, run.mocks);
    run.executions.push(name);
    return session.runInput(payload, inputs.length > 1 ? `${label}:${t + 1}` : label, name);
  };
  for (const [t, payload] of inputs.slice(0, -1).entries()) {
    const earlier = await runTurn(payload, t);
    if (earlier.status === 'SUCCEEDED') continue;
    const why = `turn ${t + 1} of ${inputs.length} did not succeed: ${earlier.reason ?? ''}`;
    failures.push({ index: null, step: null, expected: 'SUCCEEDED', actual: earlier.status, why });
  }
  return { last: await runTurn(inputs.at(-1)!, inputs.length - 1), failures };
}

/** The receipt time of every email case when recording or replaying. */
const RECORDED_CLOCK = new Date('2026-01-01T09:00:00Z');
