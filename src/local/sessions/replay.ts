/**
 * Replay and fork, the effects: run a fork of a recorded execution (local or imported) in a new
 * local session of its workflow, through the same synthesized ASL, with the step input at the fork
 * point as recorded or edited, tool results pinned, the model provider and step prompt versions
 * chosen. `stepwise replay` and Studio's fork both call {@link replay}.
 */
import { randomUUID } from 'node:crypto';
import { InvalidInputError } from '../../core/errors.ts';
import { EmailInputSchema, isEmailWorkflow } from '../../definitions/workflow/input.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { loadPlugin } from '../../runtime/plugin.ts';
import type { EmailStore } from '../../runtime/triggers/email/store.ts';
import { type SynthesizedStateMachine, synthProject } from '../cloud/synth.ts';
import {
  checkForkInput,
  editableStepInput,
  emailBodyFromTranscripts,
  type ForkPoint,
  forkName,
  forkPoint,
  forkPoints,
  pinnedToolbox,
  recordedAnswer,
  stepInputFor,
  type ToolPins,
} from '../records/fork.ts';
import {
  type EmailEdit,
  editedEmailRaw,
  type ForkEdits,
  forkChanges,
  forkEditProblems,
  type PinnedAnswer,
  pinnedModel,
} from '../records/fork-edits.ts';
import { type ExecutionRecord, type ForkChange, readLocalExecution, writeLocalExecution } from '../records/history.ts';
import { workflowWithPrompts } from '../records/prompt-versions.ts';
import { recordedEmails } from '../records/recorded-emails.ts';
import { DEFAULT_STATE_DIRS, type StateDirs } from '../records/state-dirs.ts';
import { type ModelChoice, type RunResult, WorkflowSession } from './workflow-session.ts';

export interface ReplayOptions {
  /** The execution to fork (a local record, or an imported deployed one). */
  parent: ExecutionRecord;
  /** The step to re-run from: its trail position, name (first run) or `<step>@<n>`. */
  from: string | number;
  /** The step input at that point, edited (its `input`, `previous`, `error`, `counters`). @default as recorded */
  stepInput?: Record<string, unknown>;
  /** Tool results the fork answers with, by step and tool; every other call runs for real. @default none */
  toolResults?: ToolPins;
  /** The model's answer at the forked LLM step: its tool calls and route, instead of asking the model. @default none */
  answer?: PinnedAnswer;
  /** An email workflow forked at its first step: the email edited, delivered through the ingress again. @default none */
  email?: EmailEdit;
  /** @default 'offline' */
  model?: ModelChoice;
  /** A step's prompt from a commit of its file (see promptVersions), by step. @default the current prompts */
  prompts?: Record<string, string>;
  /** Where the fork's record goes and where recorded emails are read. @default the project's `.stepwise/` */
  dirs?: StateDirs;
  /** The fork's execution name. @default `<parent>-fork-<random>` */
  name?: string;
  /** `POWERTOOLS_LOG_LEVEL` of the functions. */
  logLevel?: string;
  /** Called with the fork's name as it starts (Studio opens its live view). */
  onStart?: (name: string) => void;
}

/** A fork that ran: its result as `run` reports one, and where it came from. */
export interface ReplayResult {
  fork: RunResult;
  parent: string;
  from: ForkPoint;
}

/**
 * The email store of a fork of an email execution: the parent's email with its body as the local
 * ingress recorded it, else as its LLM steps were shown it (the recorded model requests).
 */
function forkEmails(
  parent: ExecutionRecord,
  emailsDir: string,
  body: () => string | undefined,
): Pick<EmailStore, 'get'> {
  const recorded = recordedEmails(emailsDir);
  const email = EmailInputSchema.safeParse(parent.input).data?.email;
  return {
    async get(id) {
      const stored = await recorded.get(id).catch(() => undefined);
      if (stored) return stored;
      const text = email?.id === id ? body() : undefined;
      return text === undefined ? undefined : { email: email!, body: text };
    },
  };
}

/**
 * Fork an execution and run the fork to its end (or its next pause).
 * @throws InvalidInputError when the parent ran no Stepwise workflow, did not run that step, the edited step input
 * does not match the step's schema, or an edit could not take effect there (nothing runs; the message says why).
 * @throws MissingCredentialsError for `model: 'bedrock'` without AWS credentials.
 */
export async function replay(options: ReplayOptions): Promise<ReplayResult> {
  const { parent } = options;
  if (!parent.workflow) throw new InvalidInputError(`${parent.name} is not an execution of a Stepwise workflow`);
  const plugin = await loadPlugin(parent.workflow);
  const def = plugin.def;
  const machine = (await synthProject()).stateMachines.find((m) => m.workflowName === def.manifest.name);
  if (!machine) throw new InvalidInputError(`the project has no state machine for ${def.manifest.name}`);
  const point = forkPoint(forkPoints(parent, def), options.from);
  const dirs = options.dirs ?? DEFAULT_STATE_DIRS;
  const emails = forkEmails(parent, dirs.emails, () => emailBodyFromTranscripts(parent, def));
  const { state, stored, changes } = await checkedEdits(options, def, machine.definition, point, emails);
  // A fast path decides before the model is asked: with the model's answer pinned, the fork asks the model.
  const fastPathOff = Boolean(options.answer && def.manifest.fastPaths[point.step]);
  if (fastPathOff) changes.push({ what: 'fastPaths', from: 'on', to: 'off' });
  const prompts =
    options.prompts && Object.values(options.prompts).some((ref) => ref !== 'current')
      ? workflowWithPrompts(def, options.prompts)
      : undefined;
  try {
    const session = await WorkflowSession.start({
      workflow: def.manifest.name,
      model: options.model,
      historyDir: dirs.executions,
      pausesDir: dirs.pauses,
      emailsDir: dirs.emails,
      logLevel: options.logLevel,
      onStart: options.onStart,
      localEnv: {
        ...(prompts && { STATEMACHINES_DIR: prompts.statemachinesDir }),
        ...(fastPathOff && { FAST_PATHS: 'off' }),
      },
      services: {
        ...(isEmailWorkflow(def) && { emails }),
        ...(options.toolResults && {
          wrapToolbox: (toolbox) => pinnedToolbox(toolbox, plugin.tools, options.toolResults!),
        }),
        ...(options.answer && { wrapModel: (model) => pinnedModel(model, point.step, options.answer!) }),
      },
    });
    try {
      const fork = stored
        ? await forkThroughIngress(session, { ...stored.email, body: stored.body }, options.email!, {
            parent,
            point,
            changes,
            dir: dirs.executions,
          })
        : await session.fork(
            parent,
            point,
            state,
            options.name ?? forkName(parent.name, randomUUID().slice(0, 8)),
            changes,
          );
      return { fork, parent: parent.name, from: point };
    } finally {
      await session.close();
    }
  } finally {
    prompts?.cleanup();
  }
}

/**
 * The edits of a fork checked at `point` (one that cannot take effect is refused), with the state the
 * fork starts with, the parent's stored email when it is edited, and what changed.
 * @throws InvalidInputError naming the first edit refused and why.
 */
async function checkedEdits(
  options: ReplayOptions,
  def: WorkflowDefinition,
  definition: SynthesizedStateMachine['definition'],
  point: ForkPoint,
  emails: Pick<EmailStore, 'get'>,
) {
  const { parent } = options;
  const email = isEmailWorkflow(def) ? EmailInputSchema.safeParse(parent.input).data?.email : undefined;
  const edits: ForkEdits = {
    ...(options.stepInput && { stepInput: options.stepInput }),
    ...(options.toolResults && { toolResults: options.toolResults }),
    ...(options.answer && { answer: options.answer }),
    ...(options.email && { email: options.email }),
  };
  const refused = forkEditProblems(def, point, edits, email)[0];
  if (refused) throw new InvalidInputError(`this fork cannot change that: ${refused.path}: ${refused.message}`);
  const ids = { id: parent.executionArn, name: parent.name };
  let state = point.state;
  if (options.stepInput) {
    const checked = await checkForkInput(def, definition, point, options.stepInput, ids);
    const problem = checked.problems[0];
    if (problem)
      throw new InvalidInputError(
        `the step input does not match ${point.step}'s input schema: ${problem.path}: ${problem.message}`,
      );
    state = checked.state;
  }
  const stored = email && options.email ? await emails.get(email.id) : undefined;
  if (email && options.email && !stored)
    throw new InvalidInputError(`the body of ${parent.name}'s email was not recorded: it cannot be edited`);
  const changes = forkChanges(edits, {
    stepInput: editableStepInput(definition, point.step, await stepInputFor(definition, point.step, point.state, ids)),
    answer: recordedAnswer(parent, def, point),
    ...(stored && { email: { ...stored.email, body: stored.body } }),
  });
  return { state, stored, changes };
}

/**
 * Deliver the edited email through the session's ingress as a new mail, and name the parent and
 * the changes in the execution it started (a refused mail starts none: its refusal is recorded).
 */
async function forkThroughIngress(
  session: WorkflowSession,
  original: Parameters<typeof editedEmailRaw>[0],
  edit: EmailEdit,
  fork: { parent: ExecutionRecord; point: ForkPoint; changes: ForkChange[]; dir: string },
): Promise<RunResult> {
  const raw = editedEmailRaw(original, edit, session.inbox!, new Date());
  const result = await session.deliverEmail(raw, `${fork.parent.name} with its email edited`);
  if (result.executionName && result.status !== 'REJECTED' && result.status !== 'DUPLICATE') {
    const record = readLocalExecution(result.executionName, fork.dir);
    const parent = { execution: fork.parent.name, step: fork.point.step, index: 0, changes: fork.changes };
    writeLocalExecution({ ...record, parent }, fork.dir);
  }
  return result;
}
