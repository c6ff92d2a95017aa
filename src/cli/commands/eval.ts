import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { Option } from 'commander';
import { InvalidInputError } from '../../core/errors.ts';
import { type EvalCase, loadEvalCases, loadEvalCasesFrom } from '../../definitions/eval-cases.ts';
import { compareEvalRuns, comparisonText } from '../../evals/compare.ts';
import { evalRunId, recordEvalRun } from '../../evals/eval-runs.ts';
import { junitXml } from '../../evals/junit.ts';
import { type EvalCaseResult, type EvalReport, runEvalCases } from '../../evals/runner.ts';
import { runSinglePromptEvalCases } from '../../evals/single-prompt.ts';
import type { EvalFailure } from '../../evals/validator.ts';
import { otlpTracesUrl } from '../../local/records/otlp.ts';
import { DEFAULT_STATE_DIRS } from '../../local/records/state-dirs.ts';
import { singlePromptModel } from '../../local/sessions/single-prompt.ts';
import { projectEnvironment } from '../../project/project.ts';
import { validateWorkflow } from '../../project/validate.ts';
import type { WorkflowPlugin } from '../../runtime/plugin.ts';
import { awsOptions, envOption } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, paintStatus, printJson } from '../output.ts';
import {
  choicesWithAliases,
  logLevelFor,
  modelLabel,
  modelOption,
  openAiEndpoint,
  openAiOptions,
  progressLine,
  type SessionFlags,
  trailText,
  verboseOption,
  withCleanStdout,
} from '../session-output.ts';
import { watchAndRerun, watchOption, workflowFolders } from '../watch.ts';

interface EvalFlags extends SessionFlags {
  env: string;
  watch?: boolean;
  cases?: string;
  json?: boolean;
  mode: 'step' | 'single-prompt' | 'ab';
  record?: boolean;
  replay?: boolean;
  compare?: string[];
  junit?: string;
  otlp?: string;
}

/** A saved `stepwise eval --json` report (the `--compare` inputs). */
function readReport(file: string): EvalReport {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InvalidInputError(`--compare: ${file}: ${(e as Error).message.split('\n')[0]}`);
  }
  const report = parsed as Partial<EvalReport>;
  if (!Array.isArray(report.cases) || typeof report.total !== 'number')
    throw new InvalidInputError(`--compare: ${file} is not a report of stepwise eval --json`);
  return report as EvalReport;
}

const indented = (label: string, text: string) => {
  const [first = '', ...rest] = text.split('\n');
  return [`      ${label}${first}`, ...rest.map((line) => `      ${' '.repeat(label.length)}${line}`)].join('\n');
};

function failureText(f: EvalFailure): string {
  const where = f.index === null ? 'execution' : `step ${f.index + 1} (${f.step})`;
  return [`    ${where}: ${f.why}`, indented('expected: ', f.expected), indented('actual:   ', f.actual)].join('\n');
}

function caseText(c: EvalCaseResult, width: number): string {
  const line = `${paintStatus(c.passed ? '✓' : '✗')} ${c.id.padEnd(width)}  ${trailText(c.steps)}`;
  // A failed case names what ran, to open with `stepwise history` or in Studio.
  const ran = !c.passed && c.execution ? [`    execution: ${c.execution}  (stepwise history ${c.execution})`] : [];
  return [line, ...c.failures.map(failureText), ...ran].join('\n');
}

function reportText(report: EvalReport, flags: EvalFlags): string {
  const width = Math.max(0, ...report.cases.map((c) => c.id.length));
  const summary = `${report.passed} passed, ${report.failed} failed, ${report.total} total; model: ${flags.replay ? `replay of ${report.run?.provider ?? 'recordings'}` : modelLabel(flags.model, flags)}`;
  return `${[...report.cases.map((c) => caseText(c, width)), summary].join('\n')}\n`;
}

export function register(program: Command): void {
  const command = program
    .command('eval')
    .description(
      'Run a workflow’s eval cases through the local runtime (the real synthesized ASL, the real email ingress for email ' +
        'cases, the case’s mocked tool answers) and check each outcome and step sequence. Progress on stderr; exit code 1 ' +
        'when any case fails.',
    )
    .argument('<workflow>', 'the workflow whose evals/ to run')
    .option('--cases <dir>', 'run the *.yaml cases of this folder instead of the workflow’s evals/')
    .addOption(modelOption())
    .addOption(openAiOptions()[0]!)
    .addOption(openAiOptions()[1]!)
    .option(
      '--record',
      "keep each model request and response (keyed by a hash of the request) in the workflow's recordings/ folder (with --model bedrock or openai)",
    )
    .option(
      '--replay',
      'answer every model call from the recordings, offline; a request that was never recorded (a changed prompt) fails its case, named by step, and the run ends with that line',
    )
    .option(
      '--compare <reports...>',
      'put two saved runs (files written from --json) side by side: pass rate, tokens, cost, latency, per-case differences; runs nothing',
    )
    .option('--junit <file>', 'also write the result as JUnit XML to this file, for CI')
    .option(
      '--otlp <url>',
      "export each case's executions as OpenTelemetry traces over OTLP/HTTP to this collector (default: OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    .addOption(
      choicesWithAliases(
        new Option(
          '--mode <mode>',
          'step: the state machine; single-prompt: the single-prompt agent, one LLM call with the whole instruction set and every tool, no state machine (needs --model bedrock; `monolithic` is its old name); ab: both, side by side (pass rate, model calls)',
        ),
        ['step', 'single-prompt', 'ab'],
        { monolithic: 'single-prompt' },
      ).default('step'),
    )
    .option(
      '--json',
      'print { passed, failed, total, cases: [{ id, passed, failures, steps, execution }] } (with --mode ab: { step, monolithic, comparison }), nothing else on stdout',
    )
    .addOption(envOption('whose stack runs locally; its model id with --model bedrock'))
    .addOption(verboseOption())
    .addOption(watchOption());
  awsOptions(command, 'for --model bedrock');
  withExamples(command, ['stepwise eval support-desk', 'stepwise eval support-desk --json']);
  command.action(action(evalCommand));
}

/** `stepwise eval <workflow>`: compare two saved reports, or run the workflow's cases in the chosen mode. */
async function evalCommand(workflow: string, flags: EvalFlags): Promise<void> {
  if (flags.compare) return compareReports(flags.compare, flags);
  if (flags.record && flags.replay) throw new InvalidInputError('--record and --replay exclude each other');
  // The cases' mocks answer MCP tools (checked against the pins): the servers need not be reachable.
  const { plugin } = await validateWorkflow(workflow, undefined, { mcpServers: false });
  const cases = flags.cases ? loadEvalCasesFrom(flags.cases) : loadEvalCases(plugin.def.dir);
  if (cases.length === 0)
    throw new InvalidInputError(`no eval cases (*.yaml) in ${flags.cases ?? `${workflow}/evals`}`);
  if (flags.watch) return watchAndRerun([...workflowFolders(plugin.def), ...(flags.cases ? [flags.cases] : [])]);
  process.stderr.write(
    `stepwise eval: ${cases.length} cases of ${workflow}, model: ${flags.replay ? 'replay of the recordings' : modelLabel(flags.model, flags)}\n`,
  );
  if (flags.mode === 'single-prompt') return runSinglePromptMode(plugin, cases, flags);
  if (flags.mode === 'ab') return runAbMode(workflow, plugin, cases, flags);
  return runStepMode(workflow, cases, flags);
}

/** `--compare`: two saved runs side by side; runs nothing. */
function compareReports(files: string[], flags: EvalFlags): void {
  if (files.length !== 2) {
    throw new InvalidInputError(
      `--compare takes two reports (files written from stepwise eval --json), got ${files.length}`,
    );
  }
  const [a, b] = files.map(readReport) as [EvalReport, EvalReport];
  const comparison = compareEvalRuns(a, b);
  if (flags.json) printJson(comparison);
  else process.stdout.write(comparisonText(comparison));
}

/** The cases as one LLM call each with the whole instruction set (the model of `--model`; offline is refused). */
async function runSinglePrompt(plugin: WorkflowPlugin, cases: EvalCase[], flags: EvalFlags): Promise<EvalReport> {
  const modelId = flags.model === 'bedrock' ? (await projectEnvironment(flags.env)).modelId : undefined;
  const model = singlePromptModel(plugin.def, flags.model, { openai: openAiEndpoint(flags), modelId });
  return runSinglePromptEvalCases(plugin, cases, model);
}

/** `--mode single-prompt`: the report of the single-prompt agent's run alone. */
async function runSinglePromptMode(plugin: WorkflowPlugin, cases: EvalCase[], flags: EvalFlags): Promise<void> {
  const legacy = await runSinglePrompt(plugin, cases, flags);
  if (flags.json) printJson(legacy);
  else process.stdout.write(reportText(legacy, flags));
  process.exitCode = legacy.failed > 0 ? 1 : 0;
}

/** `--mode ab`: the single-prompt agent's run, then the step run, compared by pass rate and model calls. */
async function runAbMode(workflow: string, plugin: WorkflowPlugin, cases: EvalCase[], flags: EvalFlags): Promise<void> {
  const legacy = await runSinglePrompt(plugin, cases, flags);
  const stepMode = await withCleanStdout(() =>
    runEvalCases(workflow, cases, {
      model: flags.model,
      env: flags.env,
      otlp: otlpTracesUrl(flags.otlp),
      session: { logLevel: logLevelFor(flags) },
    }),
  );
  const comparison = compareEvalRuns(stepMode, legacy);
  if (flags.json) printJson({ step: stepMode, monolithic: legacy, comparison });
  else
    process.stdout.write(
      `step mode:       ${stepMode.passed}/${stepMode.total} passed, ${comparison.modelCalls.a.toFixed(2)} model calls per case\n` +
        `single-prompt:   ${legacy.passed}/${legacy.total} passed, ${comparison.modelCalls.b.toFixed(2)} model calls per case\n`,
    );
  process.exitCode = stepMode.failed + legacy.failed > 0 ? 1 : 0;
}

/** `--mode step`: the cases on the state machine, with progress, recordings, the kept run and JUnit when asked. */
async function runStepMode(workflow: string, cases: EvalCase[], flags: EvalFlags): Promise<void> {
  const progress = progressLine();
  const started = new Date();
  const report = await withCleanStdout(() =>
    runEvalCases(workflow, cases, {
      model: flags.model,
      env: flags.env,
      openai: openAiEndpoint(flags),
      otlp: otlpTracesUrl(flags.otlp),
      ...((flags.record || flags.replay) && { recordings: flags.record ? 'record' : 'replay' }),
      // Each case's executions are kept with the local ones, named by this run and the case.
      keep: { dir: DEFAULT_STATE_DIRS.executions, runId: evalRunId(started) },
      session: { logLevel: logLevelFor(flags) },
      onCase: (c, i, n) => progress.update(`[${i + 1}/${n}] ${c.id} ${c.passed ? '✓' : '✗'}`),
      onWarning: (message) => process.stderr.write(`warning: ${message}\n`),
    }).finally(() => progress.clear()),
  );
  // Kept for Studio's Evals view (the latest runs, the diff between two).
  recordEvalRun(workflow, report, cases, flags.model, DEFAULT_STATE_DIRS.evals, started);
  if (flags.junit) writeFileSync(flags.junit, junitXml(report, workflow));
  if (flags.json) printJson(report);
  else process.stdout.write(reportText(report, flags));
  process.exitCode = report.failed > 0 ? 1 : 0;
  // The cause of a failed replay, last: the first request that was never recorded.
  const miss = report.replayMisses?.[0];
  if (miss) process.stderr.write(`${miss}\n`);
}
