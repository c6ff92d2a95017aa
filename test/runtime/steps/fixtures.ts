/**
 * Shared test doubles for the step tests (runner, code steps, handler, evals): step inputs of the fixture project's
 * case-desk workflow by default; another workflow's tests pass its name (`stepInput(step, { workflow })`) and tools.
 */

import type { InboundEmail } from '../../../src/definitions/workflow/inbound-email.ts';
import { getStep } from '../../../src/definitions/workflow/loader.ts';
import type { StepDefinition, WorkflowDefinition } from '../../../src/definitions/workflow/schema.ts';
import type {
  ContentBlock,
  ConverseRequest,
  ConverseResponse,
  ModelProvider,
} from '../../../src/runtime/contracts/model-port.ts';
import type { StepInput, StepState, ToolCallRecord } from '../../../src/runtime/contracts/step.ts';
import type { WorkflowPlugin } from '../../../src/runtime/plugin.ts';
import { runStep } from '../../../src/runtime/step-handler/run-step.ts';
import type { FastPathContext } from '../../../src/runtime/steps/fast-path.ts';
import { toolContext } from '../../../src/runtime/steps/types.ts';
import type { CallContext, Toolbox, ToolDefinition } from '../../../src/runtime/tools/types.ts';
import type { StoredEmail } from '../../../src/runtime/triggers/email/store.ts';
import { DESK_TOOLS } from '../tools/fixtures.ts';

export const WORKFLOW = 'case-desk';

export function inboundEmail(overrides: Partial<InboundEmail> = {}): InboundEmail {
  return {
    id: 'email-1',
    messageId: '<m1@example.com>',
    from: 'nora.kent@example.org',
    fromName: 'Nora Kent',
    to: ['cases@dev.desk.example.com'],
    subject: 'Desk lamp switches off',
    receivedAt: '2026-02-02T10:00:00.000Z',
    bodyChars: 60,
    ...overrides,
  };
}

export function storedEmail(body: string, overrides: Partial<InboundEmail> = {}): StoredEmail {
  return { email: inboundEmail({ bodyChars: body.length, ...overrides }), body };
}

export function previousState(overrides: Partial<StepState> = {}): StepState {
  return {
    step: null,
    next: '01-read-request',
    reason: 'start',
    decidedBy: null,
    fields: {},
    data: {},
    count: 0,
    ...overrides,
  };
}

export function stepInput(step: string, overrides: Partial<StepInput> = {}): StepInput {
  const previous = overrides.previous ?? previousState({ next: step });
  return {
    workflow: WORKFLOW,
    step,
    input: { email: inboundEmail() },
    previous,
    error: null,
    count: previous.count + 1,
    execution: { id: 'arn:aws:states:us-east-1:123456789012:execution:wf:exec-1', name: 'exec-1' },
    ...overrides,
  };
}

/**
 * A toolbox double over real tool definitions (case-desk's unless `tools` are given, e.g. a plugin's): answers from
 * `results` and records every executed call.
 */
export function fakeToolbox(
  results: Record<string, ToolCallRecord['result'] | { error: string }> = {},
  tools: Readonly<Record<string, ToolDefinition>> = DESK_TOOLS,
) {
  const executed: { name: string; args: unknown; ctx: CallContext }[] = [];
  const toolbox: Toolbox = {
    spec: (name) => (Object.hasOwn(tools, name) ? tools[name] : undefined),
    async execute(name, args, ctx) {
      executed.push({ name, args, ctx });
      const given = args as Record<string, unknown>;
      const answer = results[name];
      if (answer && typeof answer === 'object' && 'error' in answer)
        return { tool: name, args: given, error: String(answer.error) };
      return { tool: name, args: given, result: answer ?? { ok: true } };
    },
  };
  return { toolbox, executed };
}

export const toolUse = (name: string, input: unknown, id = `tu-${name}`): ContentBlock => ({
  toolUse: { toolUseId: id, name, input },
});
export const text = (value: string): ContentBlock => ({ text: value });

/**
 * A model double that plays a script: each turn is the content of one assistant message (or a
 * function of the request). It records every request it receives.
 */
export function scriptedModel(
  turns: (ContentBlock[] | ((request: ConverseRequest) => ContentBlock[]))[],
  stopReason?: ConverseResponse['stopReason'],
) {
  const requests: ConverseRequest[] = [];
  const model: ModelProvider = {
    name: 'bedrock',
    async converse(request) {
      requests.push(structuredClone(request));
      const turn = turns[requests.length - 1];
      if (!turn) throw new Error(`the script has no turn ${requests.length}`);
      const content = typeof turn === 'function' ? turn(request) : turn;
      return {
        output: { message: { role: 'assistant', content } },
        stopReason: stopReason ?? (content.some((b) => 'toolUse' in b) ? 'tool_use' : 'end_turn'),
        usage: {
          inputTokens: 100,
          outputTokens: 10,
          totalTokens: 110,
          cacheReadInputTokens: 80,
          cacheWriteInputTokens: 20,
        },
      };
    },
  };
  return { model, requests };
}

/**
 * Run one step of `plugin` as the step handler does (`runStep`: allow-list, bound arguments, guard, fast path) over a
 * fakeToolbox of the plugin's own tools answering from `results`, with a model that plays `turns`.
 */
export function runPluginStep(
  plugin: WorkflowPlugin,
  step: StepDefinition,
  input: StepInput,
  {
    results = {},
    turns = [],
    untrusted,
  }: {
    results?: Parameters<typeof fakeToolbox>[0];
    turns?: Parameters<typeof scriptedModel>[0];
    untrusted?: Record<string, unknown>;
  } = {},
) {
  const { toolbox, executed } = fakeToolbox(results, plugin.tools);
  const { model, requests } = scriptedModel(turns);
  const result = runStep({
    plugin,
    step,
    input,
    toolbox,
    tool: toolContext(input),
    model: () => model,
    untrusted: async () => untrusted,
  });
  return { result, executed, requests };
}

/** What the fast path before step `stepName` of `def` is given for an email: its subject and body, and no tools. */
export function fastPathContext(
  def: WorkflowDefinition,
  stepName: string,
  email: { subject: string; body: string },
): FastPathContext {
  const input = stepInput(stepName, { workflow: def.manifest.name });
  return {
    def,
    step: getStep(def, stepName),
    input,
    toolbox: fakeToolbox({}, {}).toolbox,
    tool: toolContext(input),
    untrusted: { email: { ...email, fromName: 'Nora Kent' } },
  };
}

/** A Powertools-shaped logger double that keeps every line. */
export function captureLogger() {
  const lines: { level: string; message: string; extra?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, extra?: Record<string, unknown>) =>
    void lines.push({ level, message, extra });
  return { logger: { info: at('INFO'), warn: at('WARN'), debug: at('DEBUG'), error: at('ERROR') }, lines };
}
