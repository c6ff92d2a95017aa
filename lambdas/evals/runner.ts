/**
 * The eval runner (seed AC5/AC6): every case becomes a real `.eml`, is delivered through the
 * ingress of a local session, and runs on the synthesized ASL with the real step handlers. The
 * case's `mock_function_responses` answer its tool calls (argument-checked against the real tool
 * specs by `mockToolbox`); the step trail and tool calls come back from the execution history and
 * are judged by the step validator.
 */
import { stepTrail, type TrailStep } from '../../infra/local/history.ts';
import { WarrantySession, type EmailResult, type EmailStep, type ModelChoice, type WarrantySessionOptions } from '../../infra/local/warranty-session.ts';
import type { StepOutput } from '../lib/contracts.ts';
import { toolSpec } from '../tools/specs.ts';
import type { Toolbox } from '../tools/types.ts';
import { mockToolbox } from './mock-toolbox.ts';
import type { EvalCase } from './schema.ts';
import { validateCase, type ActualStep, type EvalFailure } from './validator.ts';

/** One case's outcome (`stepwise eval --json` → `cases[]`). */
export interface EvalCaseResult {
  id: string;
  passed: boolean;
  /** The first diverging step's failed assertions, then whole-execution failures. */
  failures: EvalFailure[];
  /** The steps that ran, as `stepwise run` reports them. */
  steps: EmailStep[];
}

/** `stepwise eval --json`. */
export interface EvalReport {
  passed: number;
  failed: number;
  total: number;
  cases: EvalCaseResult[];
}

export interface EvalRunOptions {
  /** @default 'offline' */
  model?: ModelChoice;
  /** Deployment environment to synthesize. @default 'dev' */
  env?: string;
  /** Called as each case finishes (progress display). */
  onCase?: (result: EvalCaseResult, index: number, total: number) => void;
  /** Session settings: the CLI silences logs. Histories are not stored unless `historyDir` is given. */
  session?: Pick<WarrantySessionOptions, 'historyDir' | 'logLevel' | 'retryDelayMs'>;
}

/** The Message-ID of a case's email: it names the case inside the session. */
const messageIdOf = (evalCase: EvalCase) => `<${evalCase.scenario_id}@eval.stepwise.local>`;

/** A header value as RFC 2047 UTF-8 encoded-word when it is not plain ASCII. */
const headerText = (text: string) => (/^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`);

/**
 * The case's email as raw MIME: From (with the display name), To the session's inbox, Subject,
 * a Message-ID derived from the scenario id, the case's extra headers, and a UTF-8 text body.
 */
export function evalEmail(evalCase: EvalCase, to: string, date: Date = new Date()): string {
  const { from, from_name, subject, body, headers = {} } = evalCase.input.email;
  const sender = from_name ? `${/^[\x20-\x7e]*$/.test(from_name) ? `"${from_name.replace(/["\\]/g, '\\$&')}"` : headerText(from_name)} <${from}>` : from;
  return [
    `From: ${sender}`,
    `To: ${to}`,
    `Subject: ${headerText(subject)}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: ${messageIdOf(evalCase)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=UTF-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    body,
  ].join('\r\n');
}

/**
 * What the validator judges: each step's output. A step that failed is kept, with its error as
 * the reason (`reported` is the same trail as `stepwise run` shows it).
 */
function actualSteps(trail: TrailStep[], reported: EmailStep[]): ActualStep[] {
  return trail.map((step, i) => {
    const out = step.output as StepOutput | undefined;
    if (out && typeof out === 'object' && Array.isArray(out.toolCalls)) {
      const { next, reason, fields, toolCalls, reply } = out;
      return { step: step.name, next, reason, fields, toolCalls, ...(reply !== undefined && { reply }) };
    }
    return { step: step.name, next: '(failed)', reason: `the step failed: ${reported[i]?.error ?? 'no output'}`, fields: {}, toolCalls: [] };
  });
}

/** Failures of the whole run of a case: the ingress refused the email, or the execution did not succeed. */
function runFailures(result: EmailResult): EvalFailure[] {
  if (result.status === 'SUCCEEDED') return [];
  const ingress = result.status === 'REJECTED' || result.status === 'DUPLICATE';
  return [
    {
      index: null,
      step: null,
      expected: ingress ? 'the ingress starts an execution' : 'the execution succeeds',
      actual: `${result.status}${result.reason ? ` (${result.reason})` : ''}`,
      why: ingress ? `the ingress did not start the case: ${result.reason}` : `the execution failed: ${result.reason}`,
    },
  ];
}

/**
 * Run eval cases in one local session, one after the other, and validate each.
 * @throws MissingCredentialsError for `model: 'bedrock'` without AWS credentials (before anything starts).
 * @example
 * const report = await runEvalCases(loadEvalCases(loadWorkflow('warranty-email').dir), { onCase: (r) => console.error(r.id, r.passed) });
 */
export async function runEvalCases(cases: readonly EvalCase[], options: EvalRunOptions = {}): Promise<EvalReport> {
  // One session for all cases: each case's tool calls are answered by its own mocks, found by the email's Message-ID.
  const byMessageId = new Map(cases.map((c) => [messageIdOf(c), mockToolbox(c.input.mock_function_responses)]));
  const toolbox: Toolbox = {
    spec: toolSpec,
    execute: async (name, args, ctx) =>
      byMessageId.get(ctx.email.messageId)?.execute(name, args, ctx) ?? {
        tool: name,
        args: {},
        error: `no eval case has the Message-ID ${ctx.email.messageId}`,
      },
  };
  const session = await WarrantySession.start({
    historyDir: false,
    ...options.session,
    env: options.env,
    model: options.model ?? 'offline',
    services: { toolbox },
  });
  const results: EvalCaseResult[] = [];
  try {
    for (const [i, evalCase] of cases.entries()) {
      const delivered = await session.processRaw(evalEmail(evalCase, session.inbox), `${evalCase.scenario_id}.eml`);
      const ran = delivered.status === 'SUCCEEDED' || delivered.status === 'FAILED';
      const execution = ran && delivered.executionName !== null ? session.execution(delivered.executionName) : undefined;
      const steps = execution ? actualSteps(stepTrail(execution.history), delivered.steps) : [];
      const failures = [...runFailures(delivered), ...(execution ? validateCase(evalCase, steps).failures : [])];
      const result = { id: evalCase.scenario_id, passed: failures.length === 0, failures, steps: delivered.steps };
      results.push(result);
      options.onCase?.(result, i, cases.length);
    }
  } finally {
    await session.close();
  }
  const passed = results.filter((r) => r.passed).length;
  return { passed, failed: results.length - passed, total: results.length, cases: results };
}
