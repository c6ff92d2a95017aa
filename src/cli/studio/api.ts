/**
 * Studio's JSON API: each route reads the records through the modules the CLI uses (history,
 * pauses, step stats, eval runs, imports) and the compiled definitions through the local runtime's
 * in-process synth, and changes state only the way the CLI does (`run`, `replay`, `resume`,
 * import). See server.ts for how requests reach it and what protects the changes.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { ExecutionDoesNotExist, type SFNClient } from '@aws-sdk/client-sfn';
import * as z from 'zod';
import { DefinitionError, InvalidInputError, MissingCredentialsError } from '../../core/errors.ts';
import { STATEMACHINES_DIR } from '../../core/paths.ts';
import { EmailInputSchema, isEmailWorkflow } from '../../definitions/workflow/input.ts';
import { listWorkflows, loadWorkflow } from '../../definitions/workflow/loader.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { loadPrices, type Prices } from '../../evals/cost.ts';
import { diffEvalRuns, listEvalRuns, readEvalRun } from '../../evals/eval-runs.ts';
import type { SynthesizedApp, SynthesizedStateMachine } from '../../local/cloud/synth.ts';
import { ExecutionIndex, ListQuerySchema } from '../../local/records/execution-list.ts';
import {
  checkForkInput,
  diffExecutions,
  editableStepInput,
  forkPoint,
  forkPoints,
  recordedAnswer,
  recordedToolResults,
  stepInputFor,
  ToolPinsSchema,
} from '../../local/records/fork.ts';
import { EmailEditSchema, PinnedAnswerSchema } from '../../local/records/fork-edits.ts';
import { type ExecutionSource, readStoredExecutionAsync } from '../../local/records/history.ts';
import {
  executionFromHistory,
  importFromAws,
  listDeployedExecutions,
  storeImported,
} from '../../local/records/import.ts';
import { exportExecution } from '../../local/records/otlp.ts';
import { PauseStore } from '../../local/records/pauses.ts';
import { promptVersions } from '../../local/records/prompt-versions.ts';
import { recordedEmails } from '../../local/records/recorded-emails.ts';
import { SAFE_RECORD_NAME, type StateDirs } from '../../local/records/state-dirs.ts';
import { readLocalExecutions, stepStats, type WorkflowStats } from '../../local/records/step-stats.ts';
import { replay } from '../../local/sessions/replay.ts';
import {
  type ModelChoice,
  pauseSummary,
  type RunResult,
  resumePaused,
  WorkflowSession,
} from '../../local/sessions/workflow-session.ts';
import { executionView, graphLayout, type WorkflowGraph, withFigures } from './views.ts';

/** An error with the HTTP status it answers with. */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A request as the API sees it: `/api/<segments...>`, decoded. */
export interface Route {
  method: 'GET' | 'POST';
  segments: string[];
  query: URLSearchParams;
  body?: unknown;
}

const ModelSchema = z.enum(['offline', 'bedrock']).default('offline');
const ForkBody = z.strictObject({
  from: z.union([z.number().int().nonnegative(), z.string().min(1)]),
  stepInput: z.record(z.string(), z.unknown()).optional(),
  toolResults: ToolPinsSchema.optional(),
  answer: PinnedAnswerSchema.optional(),
  email: EmailEditSchema.optional(),
  source: z.enum(['local', 'imported']).optional(),
  model: ModelSchema,
  /** The forked step's prompt: `current` or a commit of its file. */
  prompt: z
    .string()
    .regex(/^(current|[0-9a-f]{7,40})$/)
    .optional(),
});
const CheckBody = z.strictObject({
  from: z.union([z.number().int().nonnegative(), z.string().min(1)]),
  stepInput: z.unknown(),
  source: z.enum(['local', 'imported']).optional(),
});
const ResumeBody = z.union([
  z.strictObject({ output: z.unknown() }),
  z.strictObject({ fail: z.string().min(1), error: z.string().min(1).default('CheckpointRejected') }),
]);
/** An uploaded mail: SES takes at most 40 MB; Studio takes 10 MB of text. */
const MAX_EML_CHARS = 10 * 1024 * 1024;
/** A pasted input: Step Functions takes an execution input of at most 256 KB. */
const MAX_INPUT_BYTES = 256 * 1024;
/** A sample of the workflow's folder, an uploaded `.eml` or a pasted input: exactly one. */
const RunBody = z
  .strictObject({
    workflow: z.string().min(1),
    sample: z.string().min(1).optional(),
    eml: z.string().min(1).max(MAX_EML_CHARS, `an .eml of at most ${MAX_EML_CHARS} characters`).optional(),
    input: z.unknown().optional(),
    model: ModelSchema,
  })
  .refine((b) => [b.sample, b.eml, b.input].filter((v) => v !== undefined).length === 1, {
    message: 'give one of sample, eml or input',
  });
const ImportBody = z.strictObject({ history: z.unknown(), executionArn: z.string().min(1).optional() });
const AwsImportBody = z.strictObject({ executionArn: z.string().startsWith('arn:') });

function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new HttpError(400, `${issue.path.join('.') || 'body'}: ${issue.message}`);
}

/** A name from the URL that must be a record name. */
function name(value: string | undefined, what: string): string {
  if (value === undefined || !SAFE_RECORD_NAME.test(value))
    throw new HttpError(400, `not ${what}: ${JSON.stringify(String(value).slice(0, 80))}`);
  return value;
}

/** A run, fork or resume Studio started: until its execution starts, and how it ended when it failed to. */
interface Job {
  status: 'running' | 'done' | 'failed';
  error?: string;
  result?: RunResult;
}

export interface StudioApiOptions {
  dirs: StateDirs;
  aws?: SFNClient;
  logLevel: string;
  /** The project's app as synthesized (`synthProject()`): the compiled definitions Studio draws and forks. */
  app: SynthesizedApp;
  /** The folder of the workflow definitions the app was built from. @default the project's `statemachines/` */
  statemachines?: string;
  /** The OTLP/HTTP traces URL every run, fork and resume is exported to when it ends. @default none */
  otlp?: string;
  /** Told when a trace could not be exported (the run itself stands). @default stderr */
  onWarning?: (message: string) => void;
}

export class StudioApi {
  private readonly prices: Prices = loadPrices();
  private readonly statemachines: string;
  private readonly index: ExecutionIndex;
  /** Layouts by workflow: the compiled definition does not change while Studio runs (the synth is once per process). */
  private readonly layouts = new Map<string, WorkflowGraph>();
  /** Step statistics by workflow, with the stamp of the executions folder they were computed from. */
  private readonly stats = new Map<string, { stamp: string; stats: WorkflowStats }>();
  private readonly jobs = new Map<string, Job>();
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly options: StudioApiOptions) {
    this.statemachines = options.statemachines ?? STATEMACHINES_DIR;
    this.index = new ExecutionIndex(options.dirs, (workflow) => this.known(workflow));
  }

  /** The HTTP status of an error thrown by a route. */
  statusOf(e: unknown): number {
    if (e instanceof ExecutionDoesNotExist) return 404;
    if (e instanceof InvalidInputError || e instanceof DefinitionError || e instanceof MissingCredentialsError)
      return 400;
    return 500;
  }

  /** Wait for the runs, forks and resumes still going (closing Studio). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  async handle(route: Route): Promise<unknown> {
    const [head, a, b, c] = route.segments;
    const get = route.method === 'GET';
    if (get && head === 'overview' && !a) return this.overview();
    if (get && head === 'workflows' && a && !b) return this.workflow(a);
    if (get && head === 'executions' && !a) return this.executions(route.query);
    const source = route.query.get('source');
    if (get && head === 'executions' && a && !b) return this.execution(name(a, 'an execution name'), source);
    if (get && head === 'executions' && a && b === 'events' && !c)
      return (await this.record(name(a, 'an execution name'), source)).record.events;
    if (get && head === 'executions' && a && b === 'fork' && !c)
      return this.forkForm(name(a, 'an execution name'), route.query.get('from') ?? '0', source);
    if (!get && head === 'executions' && a && b === 'fork' && c === 'check')
      return this.checkFork(name(a, 'an execution name'), route.body);
    if (!get && head === 'executions' && a && b === 'fork' && !c)
      return this.fork(name(a, 'an execution name'), route.body);
    if (get && head === 'jobs' && a && !b) return this.job(name(a, 'an execution name'));
    if (get && head === 'diff' && !a)
      return this.diff(
        name(route.query.get('a') ?? undefined, 'an execution name'),
        name(route.query.get('b') ?? undefined, 'an execution name'),
      );
    if (get && head === 'pauses' && !a) return this.pauses();
    if (!get && head === 'pauses' && a && b === 'resume' && !c)
      return this.resume(name(a, 'an execution name'), route.body);
    if (!get && head === 'runs' && !a) return this.run(route.body);
    if (!get && head === 'imports' && !a) return this.importFile(route.body);
    if (get && head === 'aws' && a === 'executions' && !b) return this.awsExecutions();
    if (!get && head === 'aws' && a === 'imports' && !b) return this.awsImport(route.body);
    if (get && head === 'evals' && !a) return this.evals();
    if (get && head === 'evals' && a && b === 'diff' && !c) return this.evalDiff(name(a, 'a workflow'), route.query);
    if (get && head === 'evals' && a && b && !c)
      return readEvalRun(name(a, 'a workflow'), name(b, 'an eval run'), this.options.dirs.evals);
    throw new HttpError(404, `no such API: ${route.method} /api/${route.segments.join('/')}`);
  }

  private machine(workflow: string): SynthesizedStateMachine {
    const machine = this.options.app.stateMachines.find((m) => m.workflowName === workflow);
    if (!machine) throw new HttpError(404, `no compiled workflow ${workflow}`);
    return machine;
  }

  /** A workflow of the project, by a name from the URL (no other folder is ever read). */
  private def(workflow: string): WorkflowDefinition {
    if (!listWorkflows(this.statemachines).includes(workflow))
      throw new HttpError(
        404,
        `no workflow ${JSON.stringify(workflow.slice(0, 80))} (known: ${listWorkflows(this.statemachines).join(', ')})`,
      );
    return loadWorkflow(workflow, this.statemachines);
  }

  private samples(def: WorkflowDefinition): string[] {
    const dir = join(def.dir, 'samples');
    return existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => ['.json', '.jsonl', '.eml'].includes(extname(f)))
          .sort()
      : [];
  }

  private overview() {
    return {
      project: this.options.dirs.root,
      aws: Boolean(this.options.aws),
      workflows: listWorkflows(this.statemachines).map((w) => {
        const def = loadWorkflow(w, this.statemachines);
        return {
          name: w,
          description: def.manifest.description,
          version: def.manifest.version,
          steps: def.steps.length,
          samples: this.samples(def),
        };
      }),
    };
  }

  private workflow(workflow: string) {
    const def = this.def(workflow);
    const stats = this.workflowStats(workflow);
    let layout = this.layouts.get(workflow);
    if (!layout) this.layouts.set(workflow, (layout = graphLayout(def, this.machine(workflow).definition)));
    const graph = withFigures(layout, stats);
    const { manifest } = def;
    return {
      name: manifest.name,
      description: manifest.description,
      version: manifest.version,
      entry: manifest.entry,
      fallback: manifest.fallback,
      maxSteps: manifest.maxSteps,
      model: manifest.model.id,
      stateMachine: this.machine(workflow).name,
      counters: manifest.counters,
      steps: def.steps.map((s) => ({
        name: s.name,
        kind: s.kind,
        description: s.description,
        version: s.version,
        next: s.next,
        tools: s.tools,
        ...(s.consensus && { consensus: { samples: s.consensus.samples, maxConcurrency: s.consensus.maxConcurrency } }),
        ...(s.pause && { pause: { timeoutSeconds: s.pause.timeoutSeconds, onTimeout: s.pause.onTimeout } }),
      })),
      samples: this.samples(def),
      stats,
      graph,
    };
  }

  /** `stepwise stats <workflow>` over the local executions, computed again only when the folder changed. */
  private workflowStats(workflow: string): WorkflowStats {
    const dir = this.options.dirs.executions;
    const folder = existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith('.json'))
          .map((f) => `${f}:${statSync(join(dir, f)).mtimeMs}`)
          .join('|')
      : '';
    const paused = new Set(new PauseStore(this.options.dirs.pauses).list().map((p) => p.name));
    const stamp = `${folder}|${[...paused].join(',')}`;
    const cached = this.stats.get(workflow);
    if (cached?.stamp === stamp) return cached.stats;
    const stats = stepStats(readLocalExecutions(workflow, dir).records, paused);
    this.stats.set(workflow, { stamp, stats });
    return stats;
  }

  /** Every stored execution (local and imported) and refused mail, filtered, searched and sorted (`ListQuerySchema`). */
  private executions(query: URLSearchParams) {
    const parsed = ListQuerySchema.safeParse(Object.fromEntries(query));
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new HttpError(400, `${issue.path.join('.')}: ${issue.message}`);
    }
    const paused = new Set(new PauseStore(this.options.dirs.pauses).list().map((p) => p.name));
    return this.index.list(parsed.data, paused);
  }

  /** A stored execution by name; `source` picks the folder when an imported one has the name of a local one. */
  private record(execution: string, source?: string | null) {
    if (source && source !== 'local' && source !== 'imported') throw new HttpError(400, 'source is local or imported');
    return readStoredExecutionAsync(execution, this.options.dirs, (source as ExecutionSource | null) ?? undefined);
  }

  private known(workflow: string | undefined): WorkflowDefinition | undefined {
    return workflow && listWorkflows(this.statemachines).includes(workflow)
      ? loadWorkflow(workflow, this.statemachines)
      : undefined;
  }

  private async execution(execution: string, source: string | null) {
    let found: Awaited<ReturnType<StudioApi['record']>>;
    try {
      found = await this.record(execution, source);
    } catch (e) {
      const job = this.jobs.get(execution);
      if (e instanceof ExecutionDoesNotExist && job)
        throw new HttpError(job.status === 'failed' ? 400 : 404, job.error ?? `${execution} has not started yet`);
      throw e;
    }
    const { record } = found;
    const def = this.known(record.workflow);
    const view = executionView(
      record,
      def,
      def && this.machine(def.manifest.name).definition,
      this.prices,
      found.source,
    );
    const paused = found.source === 'local' ? new PauseStore(this.options.dirs.pauses).get(execution) : undefined;
    const forks = (await this.index.list({ limit: 10_000 })).executions
      .filter((s) => s.parent?.execution === execution)
      .map((s) => ({ name: s.name, step: s.parent!.step, status: s.status }));
    return { ...view, ...(paused && { pause: pauseSummary(paused) }), forks };
  }

  private async forkContext(execution: string, from: string | number, source?: string | null) {
    const { record } = await this.record(execution, source);
    const def = this.known(record.workflow);
    if (!def) throw new HttpError(400, `${execution} did not run a workflow of this project: it cannot be forked`);
    const definition = this.machine(def.manifest.name).definition;
    const point = forkPoint(forkPoints(record, def), from);
    return { record, def, definition, point, ids: { id: record.executionArn, name: record.name } };
  }

  /** What the fork form shows: the step input at that step to edit, the tool results it got, the prompt versions, the models. */
  private async forkForm(execution: string, from: string, source: string | null) {
    const { record, def, definition, point, ids } = await this.forkContext(execution, from, source);
    const step = def.steps.find((s) => s.name === point.step)!;
    const email =
      point.index === 0 && isEmailWorkflow(def) ? EmailInputSchema.safeParse(record.input).data?.email : undefined;
    const stored =
      email &&
      (await recordedEmails(this.options.dirs.emails)
        .get(email.id)
        .catch(() => undefined));
    return {
      execution,
      point: { index: point.index, step: point.step, entryState: point.entryState },
      kind: step.kind,
      stepInput: editableStepInput(
        definition,
        point.step,
        await stepInputFor(definition, point.step, point.state, ids),
      ),
      toolResults: recordedToolResults(record, def, point),
      // What the model answered there, to pin instead (LLM steps): its routes and outputs to choose from.
      ...(step.kind === 'llm' &&
        !step.consensus && {
          answer: { ...recordedAnswer(record, def, point), edges: step.next, outputs: step.outputs, tools: step.tools },
        }),
      // The email itself, editable at an email workflow's first step (it goes through the ingress again).
      ...(email && {
        email: { subject: email.subject, from: email.from, fromName: email.fromName ?? '', body: stored?.body },
      }),
      prompts: step.kind === 'llm' ? promptVersions(def, point.step) : [],
      models: ['offline', 'bedrock'],
    };
  }

  private async checkFork(execution: string, body: unknown) {
    const { from, stepInput, source } = parseBody(CheckBody, body);
    const { def, definition, point, ids } = await this.forkContext(execution, from, source);
    const { problems } = await checkForkInput(def, definition, point, stepInput, ids);
    return { problems };
  }

  /**
   * Start a job that reports its execution's name through `onStart`: answer as soon as it started
   * (the UI opens its live view) or when it ended without starting (refused, failed to start).
   */
  private start(
    run: (onStart: (name: string) => void) => Promise<RunResult>,
  ): Promise<{ name: string } | { result: RunResult }> {
    const traced = (onStart: (name: string) => void) => run(onStart).then((result) => this.exportTrace(result));
    return new Promise((resolve, reject) => {
      let started: string | undefined;
      const job = traced((name) => {
        started = name;
        this.jobs.set(name, { status: 'running' });
        resolve({ name });
      }).then(
        (result) => {
          if (started) this.jobs.set(started, { status: 'done', result });
          else resolve({ result });
        },
        (e: unknown) => {
          if (started)
            this.jobs.set(started, { status: 'failed', error: `${(e as Error).name}: ${(e as Error).message}` });
          else reject(e);
        },
      );
      this.running.add(job);
      void job.finally(() => this.running.delete(job));
    });
  }

  /** The ended execution of a job as a trace to the `otlp` collector; a collector that refuses it is a warning. */
  private async exportTrace(result: RunResult): Promise<RunResult> {
    const { otlp, onWarning = (m: string) => process.stderr.write(`warning: ${m}\n`) } = this.options;
    if (!otlp || !result.executionName) return result;
    try {
      const { record } = await this.record(result.executionName, 'local');
      const def = this.known(record.workflow);
      if (def) await exportExecution(otlp, record, def);
    } catch (e) {
      onWarning(`${result.executionName}: its trace was not exported: ${(e as Error).message}`);
    }
    return result;
  }

  private job(execution: string): Job {
    const job = this.jobs.get(execution);
    if (!job) throw new HttpError(404, `no run, fork or resume of ${execution} was started here`);
    return job;
  }

  private async fork(execution: string, body: unknown) {
    const request = parseBody(ForkBody, body);
    const { record, point } = await this.forkContext(execution, request.from, request.source);
    const { dirs, logLevel } = this.options;
    return this.start(async (onStart) => {
      const ran = await replay({
        parent: record,
        from: point.index,
        ...(request.stepInput && { stepInput: request.stepInput }),
        ...(request.toolResults && { toolResults: request.toolResults }),
        ...(request.answer && { answer: request.answer }),
        ...(request.email && { email: request.email }),
        model: request.model as ModelChoice,
        ...(request.prompt && { prompts: { [point.step]: request.prompt } }),
        dirs,
        logLevel,
        onStart,
      });
      return ran.fork;
    });
  }

  private async diff(a: string, b: string) {
    const [ra, rb] = [(await this.record(a)).record, (await this.record(b)).record];
    const def = this.known(ra.workflow);
    if (!def || ra.workflow !== rb.workflow)
      throw new HttpError(400, `${a} and ${b} are not runs of the same workflow of this project`);
    return diffExecutions(ra, rb, def);
  }

  private pauses() {
    return new PauseStore(this.options.dirs.pauses)
      .list()
      .map((p) => ({ ...pauseSummary(p), fields: (p.request as { fields?: unknown } | undefined)?.fields ?? null }));
  }

  private async resume(execution: string, body: unknown) {
    const how = parseBody(ResumeBody, body);
    if (!new PauseStore(this.options.dirs.pauses).get(execution))
      throw new HttpError(404, `no paused local execution "${execution}"`);
    const resolution = 'output' in how ? { output: how.output } : { error: how.error, cause: how.fail };
    const { dirs, logLevel } = this.options;
    return this.start((onStart) =>
      resumePaused(execution, resolution, {
        pausesDir: dirs.pauses,
        historyDir: dirs.executions,
        emailsDir: dirs.emails,
        logLevel,
        onStart,
      }),
    );
  }

  /** Run one sample of a workflow, as `stepwise run` does. */
  private async run(body: unknown) {
    const { workflow, sample, eml, input, model } = parseBody(RunBody, body);
    const def = this.def(workflow);
    // Only a sample the folder lists: the name never becomes a path of its own.
    if (sample !== undefined && !this.samples(def).includes(sample))
      throw new HttpError(404, `${workflow} has no sample ${JSON.stringify(sample.slice(0, 80))}`);
    if (input !== undefined && Buffer.byteLength(JSON.stringify(input)) > MAX_INPUT_BYTES)
      throw new HttpError(413, `the input is over ${MAX_INPUT_BYTES} bytes, the most Step Functions takes`);
    const { dirs, logLevel } = this.options;
    return this.start(async (onStart) => {
      const session = await WorkflowSession.start({
        workflow,
        model: model as ModelChoice,
        historyDir: dirs.executions,
        pausesDir: dirs.pauses,
        emailsDir: dirs.emails,
        logLevel,
        onStart,
      });
      try {
        if (eml !== undefined) return await session.deliverEmail(eml, 'uploaded.eml');
        if (input !== undefined) return await session.runInput(input, 'pasted.json');
        const [result] = await session.runFiles([join(def.dir, 'samples', sample!)]);
        return result!;
      } finally {
        await session.close();
      }
    });
  }

  private importFile(body: unknown) {
    const { history, executionArn } = parseBody(ImportBody, body);
    const record = storeImported(executionFromHistory(history, executionArn), this.options.dirs.imports, 'file');
    return { name: record.name, workflow: record.workflow ?? null, status: record.status };
  }

  private aws(): SFNClient {
    if (!this.options.aws) throw new HttpError(400, 'start Studio with --aws to read deployed executions');
    return this.options.aws;
  }

  private async awsExecutions() {
    return { executions: await listDeployedExecutions(this.aws()) };
  }

  private async awsImport(body: unknown) {
    const { executionArn } = parseBody(AwsImportBody, body);
    const record = await importFromAws(executionArn, this.aws(), this.options.dirs.imports);
    return { name: record.name, workflow: record.workflow ?? null, status: record.status };
  }

  private evals() {
    return listWorkflows(this.statemachines).map((workflow) => ({
      workflow,
      runs: listEvalRuns(workflow, this.options.dirs.evals, 10).map(({ id, at, model, passed, failed, total }) => ({
        id,
        at,
        model,
        passed,
        failed,
        total,
      })),
    }));
  }

  private evalDiff(workflow: string, query: URLSearchParams) {
    const [a, b] = [name(query.get('a') ?? undefined, 'an eval run'), name(query.get('b') ?? undefined, 'an eval run')];
    return diffEvalRuns(
      readEvalRun(workflow, a, this.options.dirs.evals),
      readEvalRun(workflow, b, this.options.dirs.evals),
    );
  }
}
