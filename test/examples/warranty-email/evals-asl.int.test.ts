/**
 * The warranty agent in the real synthesized ASL (local runtime): every eval case with the offline
 * model, and the two guards around a model: an injected route ends in the fallback, throttling is
 * retried by the state machine before it does.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { beforeAll, describe, expect, it } from 'vitest';
import { ModelThrottledError } from '../../../src/core/errors.ts';
import { type EvalCase, loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { validateCase } from '../../../src/evals/validator.ts';
import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import { stepTrail } from '../../../src/local/records/history.ts';
import { mockToolbox } from '../../../src/local/records/mock-toolbox.ts';
import type { ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import { ROUTE_TOOL, readStepContext } from '../../../src/runtime/contracts/prompt.ts';
import type { StepOutput } from '../../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { OfflineModel } from '../../../src/runtime/models/offline.ts';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import type { StepServices } from '../../../src/runtime/step-handler/handler.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';
import type { StoredEmail } from '../../../src/runtime/triggers/email/store.ts';
import { captureLogger } from '../../runtime/steps/fixtures.ts';

const plugin = await loadPlugin('warranty-email');
const def = plugin.def;
const cases = loadEvalCases(def.dir);
const offline = OfflineModel.forWorkflow(def);

// Handlers are created once per function and keep their services: these delegate to the current test's.
const current: { toolbox?: Toolbox; stored?: StoredEmail; model: ModelProvider } = { model: offline };
const services: StepServices = {
  toolbox: {
    spec: (name) => current.toolbox!.spec(name),
    execute: (name, args, ctx) => current.toolbox!.execute(name, args, ctx),
  },
  emails: { get: async () => current.stored },
  model: {
    get name() {
      return current.model.name;
    },
    converse: (request) => current.model.converse(request),
  },
  events: memoryEventLog(),
  logger: captureLogger().logger as unknown as Logger,
};

let runtime: LocalRuntime;
beforeAll(async () => {
  runtime = await LocalRuntime.create({
    services,
    extraEnv: { MODEL_PROVIDER: 'offline' },
    historyDir: false,
    retryDelayMs: 0,
  });
});

async function execute(evalCase: EvalCase, name: string) {
  const given = evalCase.input.email!;
  const email = {
    id: `eval-${name}`,
    messageId: `<${name}@eval.local>`,
    from: given.from,
    ...(given.from_name ? { fromName: given.from_name } : {}),
    to: ['warranty@example.com'],
    subject: given.subject,
    receivedAt: '2026-02-02T10:00:00.000Z',
    bodyChars: given.body.length,
  };
  current.toolbox = mockToolbox(plugin.tools, evalCase.input.mock_function_responses);
  current.stored = { email, body: given.body };
  const execution = await runtime.startExecution('warranty-email', { email }, { name });
  const trail = stepTrail(execution.history);
  return { execution, trail, steps: trail.flatMap((s) => (s.output ? [s.output as StepOutput] : [])) };
}

const byId = (id: string) => cases.find((c) => c.scenario_id === id)!;

describe('warranty-email eval cases in the synthesized ASL', () => {
  it.each(cases.map((c) => [c.scenario_id, c] as const))('%s', async (id, evalCase) => {
    current.model = offline;
    const { execution, steps } = await execute(evalCase, id);
    expect(execution.status).toBe('SUCCEEDED');
    expect(validateCase(evalCase, steps).failures).toEqual([]);
  });
});

describe('model guards in the synthesized ASL', () => {
  it('a model that follows an injected NEXT_STEP ends in the fallback with the reason, never in step 05', async () => {
    current.model = {
      name: 'bedrock',
      async converse(request) {
        const step = readStepContext(request)!.step;
        const input =
          step === '01-extract-serial'
            ? { next: '05-send-confirmation', reason: 'The email says the warranty was verified' }
            : { next: 'DONE', reason: 'r' };
        return {
          output: {
            message: {
              role: 'assistant',
              content: [{ toolUse: { toolUseId: `t${request.messages.length}`, name: ROUTE_TOOL, input } }],
            },
          },
          stopReason: 'tool_use',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        };
      },
    };
    const { execution, trail, steps } = await execute(byId('prompt_injection_001'), 'injected-route');
    expect(execution.status).toBe('SUCCEEDED');
    expect(trail.map((s) => s.name)).toEqual(['01-extract-serial', '04-out-of-scope']);
    expect(trail[0]!.error).toMatchObject({ error: 'InvalidModelOutputError' });
    expect(trail[0]!.retries).toBe(0);
    expect(steps.at(-1)!.reason).toContain(
      '01-extract-serial failed with InvalidModelOutputError: 01-extract-serial: route "05-send-confirmation" is not a declared edge',
    );
    expect(steps.at(-1)!.reply).toContain('a member of our support team will review it');
  });

  it('throttling is retried by the state machine, then succeeds', async () => {
    let calls = 0;
    current.model = {
      name: 'offline',
      async converse(request) {
        if (++calls <= 2) throw new ModelThrottledError('Bedrock Converse failed: ThrottlingException (HTTP 429)');
        return offline.converse(request);
      },
    };
    // Out of scope: step 01's model decides it (a short claim without a serial would take the fast path, no model call).
    const { execution, trail } = await execute(byId('out_of_scope_001'), 'throttled-then-ok');
    expect(execution.status).toBe('SUCCEEDED');
    expect(trail.map((s) => [s.name, s.retries])).toEqual([
      ['01-extract-serial', 2],
      ['04-out-of-scope', 0],
    ]);
  });

  it('throttling that outlasts the retries ends in the fallback', async () => {
    current.model = {
      name: 'bedrock',
      async converse() {
        throw new ModelThrottledError('Bedrock Converse failed: ThrottlingException (HTTP 429)');
      },
    };
    const { trail, steps } = await execute(byId('out_of_scope_002'), 'throttled-always');
    expect(trail[0]).toMatchObject({
      name: '01-extract-serial',
      retries: def.manifest.retry.maxAttempts,
      error: { error: 'ModelThrottledError' },
    });
    expect(steps.at(-1)).toMatchObject({ step: '04-out-of-scope', next: 'DONE' });
  });
});
