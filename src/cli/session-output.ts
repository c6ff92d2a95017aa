/**
 * What `run`, `demo` and `eval` share: the options that configure a local session, a clean
 * stdout, a progress line on stderr, and the readable form of a run's results.
 */
import { basename } from 'node:path';
import { InvalidArgumentError, Option } from 'commander';
import type {
  ModelChoice,
  OpenAiEndpoint,
  PauseSummary,
  RunResult,
  RunStatus,
  RunStep,
} from '../local/sessions/workflow-session.ts';
import { paintStatus } from './output.ts';

export interface SessionFlags {
  model: ModelChoice;
  openaiBaseUrl?: string;
  openaiModel?: string;
  verbose?: boolean;
}

/** `--model offline|bedrock|openai` (default offline: no AWS account needed). */
export const modelOption = () =>
  new Option(
    '--model <provider>',
    'offline: the deterministic stand-in (not an LLM); bedrock: Bedrock Converse, needs AWS credentials; openai: an OpenAI-compatible chat-completions endpoint (Ollama, vLLM, llama.cpp server, LM Studio), see --openai-base-url',
  )
    .choices(['offline', 'bedrock', 'openai'])
    .default('offline');

/** `--openai-base-url` and `--openai-model` (defaults: OPENAI_BASE_URL, OPENAI_MODEL; the key: OPENAI_API_KEY). */
export const openAiOptions = () => [
  new Option(
    '--openai-base-url <url>',
    'with --model openai: the API root, e.g. http://localhost:11434/v1 (Ollama)',
  ).env('OPENAI_BASE_URL'),
  new Option('--openai-model <name>', 'with --model openai: the model name the endpoint serves, e.g. llama3.1:8b').env(
    'OPENAI_MODEL',
  ),
];

/** The endpoint of `--model openai`, when both its options are given. */
export const openAiEndpoint = (flags: SessionFlags): OpenAiEndpoint | undefined =>
  flags.model === 'openai' && flags.openaiBaseUrl && flags.openaiModel
    ? { baseUrl: flags.openaiBaseUrl, model: flags.openaiModel }
    : undefined;

/** Commander collector for a repeatable option. */
export const repeatable = (value: string, all: string[] = []) => [...all, value];

/**
 * `--local-env NAME=VALUE` (repeatable): added to every function's environment in the local session, after the
 * manifest's `local.env`.
 */
export const localEnvOption = () =>
  new Option(
    '--local-env <name=value>',
    "set an environment variable of the workflow's functions for this local run (repeatable), e.g. A_DATA_FILE=my-data.json",
  ).argParser((pair: string, all: Record<string, string> = {}) => {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(pair);
    if (!m) throw new InvalidArgumentError(`expected NAME=VALUE with an UPPER_SNAKE_CASE name, got "${pair}"`);
    return { ...all, [m[1]!]: m[2]! };
  });

/** `option.choices(values)` that also takes each old name of `aliases` for the value it now has (help lists `values`). */
export function choicesWithAliases(option: Option, values: readonly string[], aliases: Record<string, string>): Option {
  const check = option.choices(values).parseArg!;
  return option.argParser((value: string, previous: unknown) => check(aliases[value] ?? value, previous));
}

export const verboseOption = () =>
  new Option('--verbose', "show the step handlers' Powertools logs (on stderr), at the template's log level");

/** Powertools log level for the session: silent unless `--verbose`, so the output stays readable. */
export const logLevelFor = (flags: SessionFlags) => (flags.verbose ? undefined : 'SILENT');

export const modelLabel = (model: ModelChoice, flags?: Pick<SessionFlags, 'openaiBaseUrl' | 'openaiModel'>) =>
  model === 'offline'
    ? 'offline stand-in (deterministic rules, NOT an LLM)'
    : model === 'openai'
      ? `OpenAI-compatible ${flags?.openaiModel ?? '(no --openai-model)'} at ${flags?.openaiBaseUrl ?? '(no --openai-base-url)'}`
      : 'Bedrock (the workflow’s pinned model)';

/**
 * Run `fn` with everything written to stdout sent to stderr instead, and hand it `print` for the
 * real stdout. Handlers log through Powertools, which writes to stdout; `--json` promises that
 * stdout holds the JSON document and nothing else.
 */
export async function withCleanStdout<T>(fn: (print: (text: string) => void) => Promise<T>): Promise<T> {
  const write = process.stdout.write;
  const print = (text: string) => void write.call(process.stdout, text);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  try {
    return await fn(print);
  } finally {
    process.stdout.write = write;
  }
}

/** A progress line on stderr: rewritten in place on a terminal, one line per update otherwise (logs, CI). */
export function progressLine() {
  const tty = Boolean(process.stderr.isTTY);
  let shown = false;
  return {
    update(text: string) {
      process.stderr.write(tty ? `\r\x1b[2K${text}` : `${text}\n`);
      shown = tty;
    },
    clear() {
      if (shown) process.stderr.write('\r\x1b[2K');
      shown = false;
    },
  };
}

function stepText(step: RunStep): string {
  const retries = step.retries ? ` ↻${step.retries}` : '';
  return step.error ? `${step.name} ✗ ${step.error.split(':')[0]}${retries}` : `${step.name}${retries}`;
}

/** `01-understand → 02-look-up → …`, and the model calls when there were any. */
export function trailText(steps: RunStep[]): string {
  const calls = steps.reduce((n, s) => n + (s.usage?.modelCalls ?? 0), 0);
  return `${steps.map(stepText).join(' → ')}${calls ? `  [${calls} model call${calls === 1 ? '' : 's'}]` : ''}`;
}

const indent = (text: string, prefix: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => `${prefix}${line}`.trimEnd())
    .join('\n');

/**
 * The readable form of one input's result: a line with the file, the status and the step trail
 * (or the reason it did not run), the failure reason, the step outputs of the last step, then
 * every message sent.
 *
 * @example
 * claim.eml  SUCCEEDED  01-extract → 02-check → 03-reply  [2 model calls]
 *   reply to maria.lopez@example.org: Re: Headphones stopped charging
 *   │ Hello Maria Lopez, …
 */
function formatResult(result: RunResult, width = 0): string {
  const ran = result.status === 'SUCCEEDED' || result.status === 'FAILED' || result.status === 'PAUSED';
  const lines = [
    `${basename(result.file).padEnd(width)}  ${paintStatus(result.status.padEnd(9))}  ${ran ? trailText(result.steps) : (result.reason ?? '')}`,
  ];
  // The name history, replay and Studio take.
  if (ran && result.executionName) lines.push(`  execution: ${result.executionName}`);
  if (ran && result.reason) lines.push(`  reason: ${result.reason}`);
  for (const step of result.steps.filter((s) => s.error)) lines.push(`  ${step.name} failed: ${step.error}`);
  for (const call of result.toolCalls.filter((c) => c.error !== undefined))
    lines.push(`  ${call.step}: ${call.tool} not completed: ${call.error}`);
  for (const mail of result.outbox) lines.push(`  reply to ${mail.to}: ${mail.subject}`, indent(mail.body, '  │ '));
  if (result.pause) lines.push(...pauseLines(result.pause));
  if (result.output !== undefined && result.outbox.length === 0)
    lines.push(indent(JSON.stringify(result.output, null, 2), '  │ '));
  return lines.join('\n') + '\n';
}

/** Text as it reads: a string as is, a list item by item, an object as `key: value`; JSON only for what has no plainer form. */
export function plainLines(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value === 'string') return value.split('\n').filter((l) => l.trim());
  if (Array.isArray(value))
    return value.flatMap((v) => (typeof v === 'object' && v !== null ? [JSON.stringify(v)] : plainLines(v)));
  if (typeof value === 'object')
    return Object.entries(value).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return [String(value)];
}

/** A paused execution: where it waits, what the resumer must do, until when, and the command that resumes it. */
export function pauseLines(pause: PauseSummary): string[] {
  const actions = plainLines(pause.requiredActions);
  return [
    `  paused at ${pause.state}${pause.next ? ` (then ${pause.next})` : ''}${pause.deadline ? `, times out at ${pause.deadline}` : ''}`,
    ...actions.map((a) => `  - ${a}`),
    `  resume: ${pause.resume}`,
  ];
}

const STATUSES: readonly RunStatus[] = ['SUCCEEDED', 'FAILED', 'PAUSED', 'REJECTED', 'DUPLICATE'];

/** All results, aligned and a blank line apart, then a one-line tally by status. */
export function formatResults(results: RunResult[]): string {
  const width = Math.max(0, ...results.map((r) => basename(r.file).length));
  const tally = STATUSES.map((status) => [status, results.filter((r) => r.status === status).length] as const)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  const body = results.map((r) => formatResult(r, width)).join('\n');
  return `${body}\n${results.length} input${results.length === 1 ? '' : 's'}: ${tally || 'none'}\n`;
}

/**
 * One line per input (file, status, step trail or why it did not run), and where a paused one
 * waits: what `stepwise demo` prints. `formatResults` adds the outputs and messages sent.
 */
export function briefResults(results: RunResult[]): string {
  const width = Math.max(0, ...results.map((r) => basename(r.file).length));
  return results
    .map((r) => {
      const ran = r.status === 'SUCCEEDED' || r.status === 'FAILED' || r.status === 'PAUSED';
      const line = `  ${basename(r.file).padEnd(width)}  ${r.status.padEnd(9)}  ${ran ? trailText(r.steps) : (r.reason ?? '')}`;
      return r.pause ? `${line}\n  ${' '.repeat(width)}  waits at ${r.pause.state} for a person or an agent` : line;
    })
    .join('\n');
}

/** An input the session refused before anything ran (not JSON, or not what the workflow's input schema takes). */
const badInput = (r: RunResult) => r.status === 'REJECTED' && !('messageId' in r);

/**
 * Exit code of a run: 1 when an execution FAILED or an input was refused as invalid; mail the
 * ingress refused (REJECTED with its Message-ID) and DUPLICATE are normal outcomes.
 */
export const runExitCode = (results: RunResult[]) =>
  results.some((r) => r.status === 'FAILED' || badInput(r)) ? 1 : 0;
