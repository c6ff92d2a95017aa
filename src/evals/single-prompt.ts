/**
 * The single-prompt agent's evals, for the A/B against the step workflow: one LLM step with the workflow's
 * whole instruction set and every tool, no state machine and no per-step allow-lists, behind the
 * same bound arguments and output guard as the single-prompt agent the rollback deploys. It runs the eval cases with
 * the same mocked tool answers and judges what such a run can be judged on: it ends, and its tool calls (`expected_function_calls`). Step sequences
 * do not apply.
 */

import type { EvalCase } from '../definitions/eval-cases.ts';
import type { WorkflowDefinition } from '../definitions/workflow/schema.ts';
import { mockToolbox } from '../local/records/mock-toolbox.ts';
import { assertAgentModel, runSinglePrompt, untrustedOfInput } from '../local/sessions/single-prompt.ts';
import type { ModelProvider } from '../runtime/contracts/model-port.ts';
import type { TokenUsage } from '../runtime/contracts/step.ts';
import type { WorkflowPlugin } from '../runtime/plugin.ts';
import { SINGLE_PROMPT_STEP } from '../runtime/steps/single-prompt.ts';
import type { EvalCaseResult, EvalReport } from './runner.ts';
import { validateFunctionCalls } from './validator.ts';

/** The execution input and untrusted fields a case's email becomes (what the ingress would hand the workflow). */
function caseInput(
  def: WorkflowDefinition,
  evalCase: EvalCase,
): {
  input: Record<string, unknown>;
  untrusted: Record<string, unknown> | undefined;
} {
  const email = evalCase.input.email;
  if (!email) {
    // As the step handler reads them: the manifest's untrusted fields of the input, shown apart.
    const input = evalCase.input.payload as Record<string, unknown>;
    return { input, untrusted: untrustedOfInput(def, input) };
  }
  const receivedAt = new Date().toISOString();
  const record = {
    id: evalCase.scenario_id,
    messageId: `<${evalCase.scenario_id}@eval.stepwise.local>`,
    from: email.from,
    fromName: email.from_name ?? '',
    subject: email.subject,
    receivedAt,
  };
  return {
    input: { email: record },
    untrusted: { email: { fromName: email.from_name ?? '', subject: email.subject, receivedAt, body: email.body } },
  };
}

/**
 * Run the eval cases on the single-prompt agent, each as its one LLM step over the case's mocks.
 * @throws InvalidInputError for the offline stand-in: it has rules per step, none for the whole set.
 */
export async function runSinglePromptEvalCases(
  plugin: WorkflowPlugin,
  cases: readonly EvalCase[],
  model: ModelProvider,
): Promise<EvalReport> {
  assertAgentModel(model);
  const def = plugin.def;
  const results: EvalCaseResult[] = [];
  for (const evalCase of cases) {
    const { input, untrusted } = caseInput(def, evalCase);
    const execution = { id: `monolithic:${evalCase.scenario_id}`, name: `monolithic-${evalCase.scenario_id}` };
    const toolbox = mockToolbox(plugin.tools, evalCase.input.mock_function_responses);
    let usage: TokenUsage | undefined;
    let failures: EvalCaseResult['failures'] = [];
    let next: string | null = null;
    let error: string | undefined;
    try {
      // The single-prompt agent's own path: its bound arguments and output guard apply.
      const result = await runSinglePrompt({ plugin, input, untrusted, toolbox, model, execution });
      usage = result.usage;
      next = result.next;
      const expected = evalCase.expected_output.expected_function_calls;
      if (expected)
        failures = validateFunctionCalls(expected, [
          {
            step: SINGLE_PROMPT_STEP,
            next: result.next,
            reason: result.reason,
            fields: result.fields,
            toolCalls: result.toolCalls,
          },
        ]).failures;
    } catch (e) {
      error = `${(e as Error).name}: ${(e as Error).message}`;
      failures = [
        { index: null, step: null, expected: 'the run ends', actual: error, why: 'the single-prompt run failed' },
      ];
    }
    const decidedBy = usage ? 'model' : null;
    results.push({
      id: evalCase.scenario_id,
      passed: failures.length === 0,
      failures,
      steps: [
        { name: SINGLE_PROMPT_STEP, next, decidedBy, fields: {}, ...(usage && { usage }), ...(error && { error }) },
      ],
    });
  }
  const passed = results.filter((r) => r.passed).length;
  const run = {
    workflow: def.manifest.name,
    provider: model.name,
    model: model.modelId ?? null,
    mode: 'monolithic' as const,
  };
  return { run, passed, failed: results.length - passed, total: results.length, cases: results };
}
