/**
 * Issue 20 item 6: the turn pipeline's judge fails closed. Through the synthesized ASL and DynamoDB
 * Local, with the offline stand-in for every step but the judge panel (08-judge `models`), whose
 * models are scripted: a verdict that is missing or does not parse is a violation, so the turn
 * regenerates once (max_retries 1) and then sends the fallback template, never the unjudged reply.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDir, loadAgent } from '../../lambdas/workflows/turn-pipeline/agent.ts';
import { loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import { type RunResult, WorkflowSession } from '../../src/local/sessions/workflow-session.ts';
import type { ConverseRequest, ConverseResponse, ModelProvider } from '../../src/runtime/contracts/model-port.ts';
import { ROUTE_TOOL, readStepContext } from '../../src/runtime/contracts/prompt.ts';
import { OfflineModel } from '../../src/runtime/models/offline.ts';
import { recordFigure } from './figures.ts';

const def = loadWorkflow('turn-pipeline');
const offline = OfflineModel.forWorkflow(def);
const [FIRST, SECOND] = def.steps.find((s) => s.name === '08-judge')!.models!;

/** What each judge model answers, by model id: the verdicts it routes with. */
let answers: Record<string, unknown> = {};

const route = (verdicts: unknown): ConverseResponse => ({
  output: {
    message: {
      role: 'assistant',
      content: [
        { toolUse: { toolUseId: 'j1', name: ROUTE_TOOL, input: { next: '09-enforce', reason: 'judged', verdicts } } },
      ],
    },
  },
  stopReason: 'tool_use',
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
});

/** The offline stand-in, but the judge panel's models answer as `answers` says. */
function scripted(modelId?: string): ModelProvider {
  return {
    name: 'offline',
    async converse(request: ConverseRequest) {
      if (readStepContext(request)?.step !== '08-judge') return offline.converse(request);
      return route(answers[modelId ?? ''] ?? {});
    },
    forModel: (id) => scripted(id),
  };
}

let session: WorkflowSession;
beforeAll(async () => {
  session = await WorkflowSession.start({
    workflow: 'turn-pipeline',
    historyDir: false,
    logLevel: 'SILENT',
    services: { model: scripted() },
  });
}, 120_000);
afterAll(async () => session?.close());

const names = (r: RunResult) => r.steps.map((s) => s.name);
const last = (r: RunResult) => r.steps.at(-1)!.fields as { reply: string; outcome: string };
const ok = { 'stay-polite': { passed: true, reason: 'polite' }, grounding: { passed: true, score: 1 } };
const fallback = loadAgent(agentDir(def.dir), def.manifest.tools).enforcement.fallback_template;

describe('a judge without a verdict (missing_verdict: fail, the default)', () => {
  it('regenerates once, then sends the fallback template when a judge gives no verdict', async () => {
    answers = { [FIRST!]: ok, [SECOND!]: {} };
    const run = await session.runInput(
      { sessionId: 'judge-missing', message: 'I want a refund for order A-10234' },
      'missing.json',
    );
    expect(run.status).toBe('SUCCEEDED');
    const from = names(run).indexOf('07-generate');
    expect(names(run).slice(from)).toEqual([
      '07-generate',
      '08-judge',
      '09-enforce',
      '07-generate',
      '08-judge',
      '09-enforce',
      '10-persist',
    ]);
    expect(run.steps[from + 2]).toMatchObject({
      next: '07-generate',
      fields: {
        attempt: 1,
        violations: expect.arrayContaining([
          expect.stringContaining(`${SECOND}: no verdict from the judge (missing_verdict: fail)`),
        ]),
      },
    });
    expect(last(run)).toMatchObject({ outcome: 'fallback', reply: fallback });
    recordFigure('judge without a verdict', 'refused');
  }, 120_000);

  it('treats an unparsable verdict the same way', async () => {
    answers = { [FIRST!]: { 'stay-polite': 'looks fine to me', grounding: { passed: 'yes' } }, [SECOND!]: ok };
    const run = await session.runInput(
      { sessionId: 'judge-garbled', message: 'I want a refund for order A-10234' },
      'garbled.json',
    );
    expect(names(run).filter((n) => n === '07-generate')).toHaveLength(2);
    expect(run.steps.find((s) => s.name === '09-enforce')!.fields.violations).toEqual(
      expect.arrayContaining([expect.stringContaining(`${FIRST}: an unparsable verdict from the judge`)]),
    );
    expect(last(run)).toMatchObject({ outcome: 'fallback', reply: fallback });
  }, 120_000);

  it('answers when every judge of the panel gives a passing verdict', async () => {
    answers = { [FIRST!]: ok, [SECOND!]: ok };
    const run = await session.runInput(
      { sessionId: 'judge-ok', message: 'I want a refund for order A-10234' },
      'ok.json',
    );
    expect(names(run).filter((n) => n === '08-judge')).toHaveLength(1);
    expect(run.steps.find((s) => s.name === '08-judge')!.usage!.modelCalls).toBe(2);
    expect(last(run).outcome).toBe('answered');
  }, 120_000);
});
