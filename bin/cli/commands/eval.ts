import type { Command } from 'commander';
import { runEvalCases, type EvalCaseResult, type EvalReport } from '../../../lambdas/evals/runner.ts';
import { loadEvalCases, loadEvalCasesFrom } from '../../../lambdas/evals/schema.ts';
import type { EvalFailure } from '../../../lambdas/evals/validator.ts';
import { InvalidInputError } from '../../../lambdas/lib/errors.ts';
import { validateWorkflow } from '../../../lambdas/lib/workflow/validate.ts';
import { action, printJson } from '../output.ts';
import {
  logLevelFor,
  modelLabel,
  modelOption,
  progressLine,
  trailText,
  verboseOption,
  withCleanStdout,
  type SessionFlags,
} from '../session-output.ts';

interface EvalFlags extends SessionFlags {
  cases?: string;
  json?: boolean;
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
  const line = `${c.passed ? '✓' : '✗'} ${c.id.padEnd(width)}  ${trailText(c.steps)}`;
  return [line, ...c.failures.map(failureText)].join('\n');
}

function reportText(report: EvalReport, flags: EvalFlags): string {
  const width = Math.max(0, ...report.cases.map((c) => c.id.length));
  const summary = `${report.passed} passed, ${report.failed} failed, ${report.total} total; model: ${modelLabel(flags.model)}`;
  return `${[...report.cases.map((c) => caseText(c, width)), summary].join('\n')}\n`;
}

export function register(program: Command): void {
  program
    .command('eval')
    .description(
      'Run a workflow’s eval cases through the local runtime (the real synthesized ASL, the real email ingress for email ' +
        'cases, the case’s mocked tool answers) and check each outcome and step sequence. Progress on stderr; exit code 1 ' +
        'when any case fails.',
    )
    .argument('<workflow>', 'the workflow whose evals/ to run')
    .option('--cases <dir>', 'run the *.yaml cases of this folder instead of the workflow’s evals/')
    .addOption(modelOption())
    .option('--json', 'print { passed, failed, total, cases: [{ id, passed, failures, steps }] }, nothing else on stdout')
    .addOption(verboseOption())
    .action(
      action(async (workflow: string, flags: EvalFlags) => {
        const { plugin } = await validateWorkflow(workflow);
        const cases = flags.cases ? loadEvalCasesFrom(flags.cases) : loadEvalCases(plugin.def.dir);
        if (cases.length === 0) throw new InvalidInputError(`no eval cases (*.yaml) in ${flags.cases ?? `${workflow}/evals`}`);
        process.stderr.write(`stepwise eval: ${cases.length} cases of ${workflow}, model: ${modelLabel(flags.model)}\n`);
        const progress = progressLine();
        const report = await withCleanStdout(() =>
          runEvalCases(workflow, cases, {
            model: flags.model,
            session: { logLevel: logLevelFor(flags) },
            onCase: (c, i, n) => progress.update(`[${i + 1}/${n}] ${c.id} ${c.passed ? '✓' : '✗'}`),
          }).finally(() => progress.clear()),
        );
        if (flags.json) printJson(report);
        else process.stdout.write(reportText(report, flags));
        process.exitCode = report.failed > 0 ? 1 : 0;
      }),
    );
}
