/**
 * The same workflow under three orchestrations, over the same step handlers, the same DynamoDB
 * Local and the same inputs: the local runtime (the synthesized ASL), a plain in-process chain (a
 * loop that does what the ASL does: Task, ResultSelector, Choice over the declared edges, Catch to
 * the fallback) and the same graph in LangGraph.js. The three run interleaved per input, in a
 * rotating order, so machine noise falls on all of them alike; the ratios are the figures.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { WorkflowDefinition } from '../../src/definitions/workflow/schema.ts';
import { DONE } from '../../src/definitions/workflow/schema.ts';
import type { LocalRuntime } from '../../src/local/asl/runtime.ts';
import { stepTrail } from '../../src/local/records/history.ts';
import type { WorkflowSession } from '../../src/local/sessions/workflow-session.ts';
import type { StepInput, StepOutput, StepState, TokenUsage } from '../../src/runtime/contracts/step.ts';
import { dynamoEventLog } from '../../src/runtime/event-log.ts';
import { DEFAULT_POLICY, localSesMessageId } from '../../src/runtime/triggers/email/checks.ts';
import { ingest } from '../../src/runtime/triggers/email/ingest.ts';
import type { WorkflowInput } from '../../src/runtime/triggers/email/starter.ts';
import { dynamoEmailStore } from '../../src/runtime/triggers/email/store.ts';
import { withMessageId } from './workloads.ts';

/** One run of one input: the steps it took and what they used. */
export interface FlowRun {
  trail: string[];
  usage: TokenUsage;
  /** Sum of the handlers' own `durationMs` (what Lambda bills). */
  handlerMs: number;
}

/** Runs an ingested email's execution input to its end under one orchestration. */
export type Orchestration = (input: WorkflowInput, executionName: string) => Promise<FlowRun>;

const ZERO: TokenUsage = {
  modelCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheWriteInputTokens: 0,
};

function addRun(run: FlowRun, out: StepOutput): void {
  run.trail.push(out.step);
  run.handlerMs += out.durationMs;
  for (const key of Object.keys(ZERO) as (keyof TokenUsage)[]) run.usage[key] += out.usage[key];
}

/** The compiled Task's `Parameters`: the StepInput the handler gets. */
const stepInput = (
  def: WorkflowDefinition,
  step: string,
  input: WorkflowInput,
  previous: StepState,
  error: StepInput['error'],
  name: string,
): StepInput => ({
  workflow: def.manifest.name,
  step,
  input: input as unknown as Record<string, unknown>,
  previous,
  error,
  count: previous.count + 1,
  execution: { id: `bench:${name}`, name },
});

/** The compiled Task's `ResultSelector`. */
const selected = ({ step, next, reason, decidedBy, fields, data, count }: StepOutput): StepState => ({
  step,
  next,
  reason,
  decidedBy,
  fields,
  data,
  count,
});

/** The compiled `Start` Pass state's result. */
const startState = (def: WorkflowDefinition): StepState => ({
  step: null,
  next: def.manifest.entry,
  reason: 'start',
  decidedBy: null,
  fields: {},
  data: {},
  count: 0,
});

type TaskFunction = (payload: unknown) => Promise<unknown>;

/** Every step's function, as the runtime deployed it. */
function stepFunctions(runtime: LocalRuntime, def: WorkflowDefinition): Record<string, TaskFunction> {
  return Object.fromEntries(def.steps.map((s) => [s.name, runtime.taskFunction(def.manifest.name, s.name)]));
}

/** Where a step's result leads: a declared edge, or the fallback (the Choice Default). */
function nextOf(def: WorkflowDefinition, step: string, state: StepState): string {
  const declared = def.steps.find((s) => s.name === step)!.next;
  return declared.includes(state.next) ? state.next : def.manifest.fallback;
}

/** The local runtime: the synthesized ASL in the interpreter. */
export function runtimeOrchestration(session: WorkflowSession): Orchestration {
  const def = session.workflow;
  return async (input, name) => {
    const execution = await session.runtime.startExecution(def.manifest.name, input, { name });
    if (execution.status !== 'SUCCEEDED') throw new Error(`runtime: ${name} ended ${execution.status}`);
    const run: FlowRun = { trail: [], usage: { ...ZERO }, handlerMs: 0 };
    for (const step of stepTrail(execution.history)) if (step.output) addRun(run, step.output as StepOutput);
    return run;
  };
}

/** A plain loop over the same functions: the least any orchestration of them can cost. */
export function chainOrchestration(session: WorkflowSession): Orchestration {
  const def = session.workflow;
  const fns = stepFunctions(session.runtime, def);
  return async (input, name) => {
    const run: FlowRun = { trail: [], usage: { ...ZERO }, handlerMs: 0 };
    let state = startState(def);
    let error: StepInput['error'] = null;
    let step = def.manifest.entry;
    for (let n = 0; n < def.manifest.maxSteps + 1; n++) {
      try {
        const out = (await fns[step]!(stepInput(def, step, input, state, error, name))) as StepOutput;
        addRun(run, out);
        state = selected(out);
      } catch (e) {
        if (step === def.manifest.fallback) throw e;
        error = { Error: (e as Error).name, Cause: (e as Error).message };
        step = def.manifest.fallback;
        continue;
      }
      if (state.next === DONE) return run;
      step = nextOf(def, step, state);
    }
    throw new Error(`chain: ${name} ran more than ${def.manifest.maxSteps} steps`);
  };
}

/** The same graph in LangGraph.js: one node per step, conditional edges over the declared routes, errors to the fallback. */
export function langGraphOrchestration(session: WorkflowSession): Orchestration {
  const def = session.workflow;
  const fns = stepFunctions(session.runtime, def);
  const State = Annotation.Root({
    input: Annotation<WorkflowInput>(),
    name: Annotation<string>(),
    result: Annotation<StepState>(),
    error: Annotation<StepInput['error']>(),
    failed: Annotation<boolean>(),
    outputs: Annotation<StepOutput[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  });
  type S = typeof State.State;
  // The builder's node-name generics would need every step name as a literal type: build it untyped.
  const graph = new StateGraph(State) as unknown as {
    addNode(name: string, fn: (s: S) => Promise<Partial<S>>): void;
    addEdge(from: string, to: string): void;
    addConditionalEdges(from: string, route: (s: S) => string, targets: string[]): void;
    compile(): { invoke(input: Partial<S>, options: { recursionLimit: number }): Promise<S> };
  };
  for (const step of def.steps) {
    graph.addNode(step.name, async (s) => {
      try {
        const out = (await fns[step.name]!(
          stepInput(def, step.name, s.input, s.result, s.error, s.name),
        )) as StepOutput;
        return { result: selected(out), failed: false, outputs: [out] };
      } catch (e) {
        if (step.name === def.manifest.fallback) throw e;
        return { error: { Error: (e as Error).name, Cause: (e as Error).message }, failed: true };
      }
    });
    const targets = [...new Set([...step.next.filter((n) => n !== DONE), def.manifest.fallback])];
    graph.addConditionalEdges(
      step.name,
      (s) => (s.failed ? def.manifest.fallback : s.result.next === DONE ? END : nextOf(def, step.name, s.result)),
      [...targets, END],
    );
  }
  graph.addEdge(START, def.manifest.entry);
  const app = graph.compile();
  return async (input, name) => {
    const final = await app.invoke(
      { input, name, result: startState(def), error: null, failed: false },
      { recursionLimit: def.manifest.maxSteps * 2 + 2 },
    );
    const run: FlowRun = { trail: [], usage: { ...ZERO }, handlerMs: 0 };
    for (const out of final.outputs) addRun(run, out);
    return run;
  };
}

/**
 * Put a sample mail through the real ingress checks and store (untimed), without starting
 * anything: the execution input and name every orchestration then runs.
 */
export function emailIngestor(
  session: WorkflowSession,
): (file: string, tag: string) => Promise<{ input: WorkflowInput; name: string }> {
  const client = session.dynamo.client;
  const { EMAILS_TABLE, EVENTS_TABLE } = session.tables;
  if (!EMAILS_TABLE || !EVENTS_TABLE)
    throw new Error(`${session.workflow.manifest.name} has no emails/events table: not an email workflow`);
  let captured: { input: WorkflowInput; name: string } | undefined;
  const deps = {
    emails: dynamoEmailStore(client, EMAILS_TABLE),
    events: dynamoEventLog(client, EVENTS_TABLE),
    starter: {
      definitive: true,
      start: async (name: string, input: WorkflowInput) => {
        captured = { input, name };
        return 'STARTED' as const;
      },
    },
    policy: { ...DEFAULT_POLICY, ownAddresses: [session.inbox ?? 'inbox@stepwise.local'] },
    clock: () => new Date(),
  };
  return async (file, tag) => {
    const raw = withMessageId(readFileSync(file, 'utf8'), tag);
    captured = undefined;
    const result = await ingest(raw, undefined, await localSesMessageId(raw), deps);
    if (result.status !== 'STARTED' || !captured)
      throw new Error(`${file}: the ingress did not start it (${result.status})`);
    return captured;
  };
}

/** The samples of the warranty workflow's five flows (valid, expired, unknown serial, missing serial, out of scope). */
export const FLOW_SAMPLES = [
  'valid-warranty',
  'expired-warranty',
  'unknown-serial',
  'missing-serial',
  'out-of-scope',
] as const;
export const flowSample = (dir: string, flow: string) => join(dir, 'samples', `${flow}.eml`);

/** Time `fn` once. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}
