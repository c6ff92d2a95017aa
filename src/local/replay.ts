/**
 * Replay and fork, the effects: run a fork of a recorded execution (local or imported) in a new
 * local session of its workflow, through the same synthesized ASL, with the step input at the fork
 * point as recorded or edited, tool results pinned, the model provider and step prompt versions
 * chosen. `stepwise replay` and Studio's fork both call {@link replay}.
 */
import { randomUUID } from 'node:crypto';
import { InvalidInputError } from '../core/errors.ts';
import { EmailInputSchema, isEmailWorkflow } from '../definitions/workflow/input.ts';
import { loadPlugin } from '../runtime/plugin.ts';
import type { EmailStore } from '../runtime/triggers/email/store.ts';
import {
  checkForkInput,
  emailBodyFromTranscripts,
  type ForkPoint,
  forkName,
  forkPoint,
  forkPoints,
  pinnedToolbox,
  type ToolPins,
} from './fork.ts';
import type { ExecutionRecord } from './history.ts';
import { workflowWithPrompts } from './prompt-versions.ts';
import { recordedEmails } from './recorded-emails.ts';
import { DEFAULT_STATE_DIRS, type StateDirs } from './state-dirs.ts';
import { synthProject } from './synth.ts';
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
 * @throws InvalidInputError when the parent ran no Stepwise workflow, did not run that step, or the edited step input
 * does not match the step's schema (nothing runs).
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
  let state = point.state;
  if (options.stepInput) {
    const checked = await checkForkInput(def, machine.definition, point, options.stepInput, {
      id: parent.executionArn,
      name: parent.name,
    });
    const problem = checked.problems[0];
    if (problem)
      throw new InvalidInputError(
        `the step input does not match ${point.step}'s input schema: ${problem.path}: ${problem.message}`,
      );
    state = checked.state;
  }
  const dirs = options.dirs ?? DEFAULT_STATE_DIRS;
  const name = options.name ?? forkName(parent.name, randomUUID().slice(0, 8));
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
      ...(prompts && { localEnv: { STATEMACHINES_DIR: prompts.statemachinesDir } }),
      services: {
        ...(isEmailWorkflow(def) && {
          emails: forkEmails(parent, dirs.emails, () => emailBodyFromTranscripts(parent, def)),
        }),
        ...(options.toolResults && {
          wrapToolbox: (toolbox) => pinnedToolbox(toolbox, plugin.tools, options.toolResults!),
        }),
      },
    });
    try {
      return { fork: await session.fork(parent, point, state, name), parent: parent.name, from: point };
    } finally {
      await session.close();
    }
  } finally {
    prompts?.cleanup();
  }
}
