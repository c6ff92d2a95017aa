import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type * as z from 'zod';
import { InvalidInputError } from '../../core/errors.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { ExecutionDiff } from '../../local/records/fork.ts';
import type { ExecutionRecord } from '../../local/records/history.ts';
import type { ReplayOptions, ReplayResult } from '../../local/sessions/replay.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import {
  formatResults,
  logLevelFor,
  modelOption,
  repeatable,
  runExitCode,
  type SessionFlags,
  verboseOption,
  withCleanStdout,
} from '../session-output.ts';

interface ReplayFlags extends SessionFlags {
  from: string;
  state?: string;
  tools?: string;
  answer?: string;
  email?: string;
  prompt?: string[];
  printState?: boolean;
  json?: boolean;
}

/** A JSON file given to an option, parsed. @throws InvalidInputError naming the option and the file. */
function jsonFile(option: string, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InvalidInputError(`${option} ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InvalidInputError(`${option} ${file}: not JSON (${(e as Error).message})`);
  }
}

/** `--prompt <step>=<commit>` pairs. */
function prompts(pairs: string[] = []): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const m = /^([^=]+)=([0-9a-f]{7,40}|current)$/.exec(pair);
      if (!m) throw new InvalidInputError(`--prompt takes <step>=<commit> (or <step>=current), got "${pair}"`);
      return [m[1], m[2]];
    }),
  );
}

export function register(program: Command): void {
  const command = program
    .command('replay')
    .description(
      'Fork a recorded execution (local, or imported into Studio) and run it again from one of its steps, locally, through the same ' +
        'synthesized ASL: the step input at that step as recorded or from --state, tool results pinned with --tools, another ' +
        'model or step prompt. The fork is stored like any execution, linked to its parent. Prints its result and how it ' +
        'differs from the parent; --print-state prints the step input and tool results to edit, and runs nothing.',
    )
    .argument('<execution>', 'the execution to fork (a name from stepwise history / Studio)')
    .requiredOption(
      '--from <step>',
      'the step to re-run from: its name (first run), <step>@<n> (its n-th run) or its position in the trail (0 = the entry step)',
    )
    .option(
      '--state <file>',
      "the step's input at that step, edited: what --print-state prints (or its stepInput: input, previous, error and counters)",
    )
    .option(
      '--tools <file>',
      'tool results to answer with instead of running the tools: JSON { "<step>": { "<tool>": { ...result } } } ({ "error": "..." } fails the call)',
    )
    .option(
      '--answer <json>',
      'LLM step: pin the model\'s answer at that step instead of asking it: { "next": "<route>", "fields": { ... }, "toolCalls": [{ "tool": "...", "args": {} }] }',
    )
    .option(
      '--email <json>',
      'email workflows, --from 0: the email edited ({ "subject", "body", "from", "fromName" }), delivered through the ingress again',
    )
    .option(
      '--prompt <step=commit>',
      "run a step with its prompt as committed in git (repeatable; see the step file's history)",
      repeatable,
    )
    .option(
      '--print-state',
      'print { stepInput, toolResults } at that step (to edit and pass to --state / --tools), run nothing',
    )
    .addOption(modelOption())
    .option('--json', 'print { fork, parent, from, diff } as JSON, nothing else on stdout')
    .addOption(verboseOption());
  withExamples(command, [
    'stepwise replay EXECUTION --from 0 --print-state',
    'stepwise replay EXECUTION --from 0 --json',
    'stepwise replay EXECUTION --from 01-understand --answer \'{"next":"02-look-up","fields":{"topic":"plan"}}\'',
  ]);
  command.action(action(replayCommand));
}

/** Fork the execution and print how the fork differs from it; with --print-state, print the fork point instead. */
async function replayCommand(execution: string, flags: ReplayFlags): Promise<void> {
  const { readStoredExecution } = await import('../../local/records/history.ts');
  const { diffExecutions } = await import('../../local/records/fork.ts');
  const { replay } = await import('../../local/sessions/replay.ts');
  const { loadWorkflow } = await import('../../definitions/workflow/loader.ts');
  const parent = readStoredExecution(execution);
  if (!parent.workflow) throw new InvalidInputError(`${execution} is not an execution of a Stepwise workflow`);
  const def = loadWorkflow(parent.workflow);
  if (flags.printState) return printForkPoint(parent, def, flags.from);
  const edits = await readEdits(flags);
  const ran = await withCleanStdout(() =>
    replay({
      parent,
      from: flags.from,
      ...edits,
      prompts: prompts(flags.prompt),
      model: flags.model,
      logLevel: logLevelFor(flags),
    }),
  );
  const diff = ran.fork.executionName
    ? diffExecutions(parent, readStoredExecution(ran.fork.executionName), def)
    : undefined;
  if (flags.json)
    printJson({ fork: ran.fork, parent: ran.parent, from: { index: ran.from.index, step: ran.from.step }, diff });
  else printFork(ran, diff);
  process.exitCode = runExitCode([ran.fork]);
}

/** `--print-state`: the step input at the fork point, as the step would get it, and the tool results it recorded. */
async function printForkPoint(parent: ExecutionRecord, def: WorkflowDefinition, from: string): Promise<void> {
  const { editableStepInput, forkPoint, forkPoints, recordedToolResults, stepInputFor } = await import(
    '../../local/records/fork.ts'
  );
  const { synthProject } = await import('../../local/cloud/synth.ts');
  const definition = (await synthProject()).stateMachines.find((m) => m.workflowName === def.manifest.name)!.definition;
  const point = forkPoint(forkPoints(parent, def), from);
  const stepInput = editableStepInput(
    definition,
    point.step,
    await stepInputFor(definition, point.step, point.state, { id: parent.executionArn, name: parent.name }),
  );
  printJson({
    step: point.step,
    index: point.index,
    stepInput,
    toolResults: { [point.step]: recordedToolResults(parent, def, point) },
  });
}

/** The edited step input (--state) and the pinned tool results (--tools), each checked. */
async function readEdits(
  flags: ReplayFlags,
): Promise<Pick<ReplayOptions, 'stepInput' | 'toolResults' | 'answer' | 'email'>> {
  const { ToolPinsSchema } = await import('../../local/records/fork.ts');
  const { PinnedAnswerSchema, EmailEditSchema } = await import('../../local/records/fork-edits.ts');
  // The whole --print-state output is accepted as it was printed, as well as its stepInput / toolResults alone.
  const stepInput = flags.state === undefined ? undefined : printedPart(jsonFile('--state', flags.state), 'stepInput');
  if (stepInput !== undefined && (typeof stepInput !== 'object' || stepInput === null || Array.isArray(stepInput)))
    throw new InvalidInputError(`--state ${flags.state}: the step input must be a JSON object`);
  const pins =
    flags.tools === undefined
      ? undefined
      : ToolPinsSchema.safeParse(printedPart(jsonFile('--tools', flags.tools), 'toolResults'));
  if (pins && !pins.success)
    throw new InvalidInputError(
      `--tools ${flags.tools}: ${pins.error.issues[0]!.path.join('.') || '(root)'}: ${pins.error.issues[0]!.message}`,
    );
  return {
    ...(stepInput !== undefined && { stepInput: stepInput as Record<string, unknown> }),
    ...(pins && { toolResults: pins.data }),
    ...(flags.answer !== undefined && { answer: jsonOption('--answer', flags.answer, PinnedAnswerSchema) }),
    ...(flags.email !== undefined && { email: jsonOption('--email', flags.email, EmailEditSchema) }),
  };
}

/** A JSON option's value, checked with `schema`. @throws InvalidInputError naming the option and the field. */
function jsonOption<S extends z.ZodType>(option: string, text: string, schema: S): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new InvalidInputError(`${option}: not JSON (${(e as Error).message})`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new InvalidInputError(
      `${option}: ${parsed.error.issues[0]!.path.join('.') || '(root)'}: ${parsed.error.issues[0]!.message}`,
    );
  return parsed.data;
}

/** The fork's result, and where its path leaves its parent's. */
function printFork(ran: ReplayResult, diff: ExecutionDiff | undefined): void {
  const path = (p: string[]) => p.join(' → ');
  const diverged =
    diff?.divergesAt == null ? 'the same path as its parent' : `a new path from step ${diff.divergesAt + 1}`;
  process.stdout.write(formatResults([ran.fork]));
  if (diff)
    process.stdout.write(
      `forked from ${ran.parent} at ${ran.from.step}: ${diverged}\n  parent: ${path(diff.a.path)}\n  fork:   ${path(diff.b.path)}\n`,
    );
}

/** `part` of a file holding the whole `--print-state` output (it has `step` and `part`), else the file as it is. */
function printedPart(value: unknown, part: 'stepInput' | 'toolResults'): unknown {
  const printed =
    value !== null && typeof value === 'object' && !Array.isArray(value) && 'step' in value && part in value;
  return printed ? (value as Record<string, unknown>)[part] : value;
}
