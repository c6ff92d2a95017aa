/**
 * Tool arguments that matter come from state: step 03a of the fixture's case-desk workflow binds open_case's case
 * reference and product to what step 02 looked up, so a model that tries another case is refused (and the refusal
 * recorded), and the only follow-up that can be filed is for the case looked up. Runs the real ingress, synthesized
 * ASL, handlers and DynamoDB Local.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import type { ContentBlock, ConverseRequest, ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import { readStepContext } from '../../../src/runtime/contracts/prompt.ts';
import { OfflineModel } from '../../../src/runtime/models/offline.ts';
import { scanTable } from './fixtures.ts';

const VALID = join(STATEMACHINES_DIR, 'case-desk/samples/valid.eml');
const LOOKED_UP = 'C-10001';

/**
 * The offline rules everywhere but in step 03a, where the model does what an injected email would
 * ask: first a follow-up on another case, then (told it may not) one without the reference.
 */
function hostileAt03a(attempts: Record<string, unknown>[]): ModelProvider {
  const offline = OfflineModel.forWorkflow(loadWorkflow('case-desk'));
  return {
    name: 'bedrock',
    async converse(request: ConverseRequest) {
      if (readStepContext(request)?.step !== '03a-open-case') return offline.converse(request);
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      const content: ContentBlock[] = [
        { toolUse: { toolUseId: `t${turn}`, name: 'open_case', input: attempts[turn] } },
      ];
      return {
        output: { message: { role: 'assistant', content } },
        stopReason: 'tool_use',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      };
    },
  };
}

describe('bound tool arguments in a workflow run', () => {
  let session: WorkflowSession;
  beforeAll(async () => {
    session = await WorkflowSession.start({
      workflow: 'case-desk',
      historyDir: false,
      logLevel: 'SILENT',
      services: {
        model: hostileAt03a([
          { caseRef: 'C-99999', product: 'Someone else’s lamp', summary: 'Broken.', priority: 'high' },
          { summary: 'The desk lamp switches off after a minute.' },
        ]),
      },
    });
  });
  afterAll(() => session?.close());

  it('refuses a model-chosen case, records the refusal, and files the one follow-up for the case looked up', async () => {
    const result = await session.deliverFile(VALID);
    expect(result.status).toBe('SUCCEEDED');
    const calls = result.toolCalls.filter((c) => c.tool === 'open_case');
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ step: '03a-open-case', result: null, args: { caseRef: 'C-99999' } });
    expect(calls[0]!.error).toMatch(
      /^ToolInputError: argument "caseRef" is bound from data\.record\.ref in step 03a-open-case/,
    );
    expect(calls[1]).toMatchObject({ args: { caseRef: LOOKED_UP, product: 'Desk lamp' }, result: { status: 'filed' } });

    const filed = await scanTable(session.dynamo.client, session.tables.CASES_TABLE!);
    expect(filed.map((t) => t.caseRef)).toEqual([LOOKED_UP]);

    // The refusal is in the event log too (without the personal reference argument).
    const events = await session.events(result.executionName!);
    const step03a = events.find((e) => e.type === 'StepCompleted' && e.step === '03a-open-case');
    expect(step03a).toMatchObject({
      toolCalls: [
        { tool: 'open_case', outcome: 'error' },
        { tool: 'open_case', outcome: 'ok' },
      ],
    });
    expect(JSON.stringify(step03a)).not.toContain('C-99999');
  });

  it('routes a single-edge step without a route call: one model call per successful turn', async () => {
    const result = await session.deliverEmail(
      readFileSync(VALID, 'utf8').replace(/^Message-ID: .*$/m, 'Message-ID: <second-delivery@example.org>'),
      'valid-again.eml',
    );
    const calls = Object.fromEntries(result.steps.map((s) => [s.name, s.usage?.modelCalls]));
    // 01: the workflow's fast path decides a clear request without the model; 03a: the refused turn and the
    // successful one; 05: the reply, then DONE without a route turn.
    expect(calls).toEqual({
      '01-read-request': 0,
      '02-look-up': 0,
      '03a-open-case': 2,
      '05-confirm': 1,
    });
    expect(result.usage?.modelCalls).toBe(3);
  });
});
