/**
 * Tool arguments that matter come from state: step 03a of the warranty agent binds create_ticket's
 * serial number and product to what step 02 checked, so a model that tries another serial is
 * refused (and the refusal recorded), and the only ticket that can be opened is for the checked
 * device. Runs the real ingress, synthesized ASL, handlers and DynamoDB Local.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import type { ContentBlock, ConverseRequest, ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import { readStepContext } from '../../../src/runtime/contracts/prompt.ts';
import { OfflineModel } from '../../../src/runtime/models/offline.ts';

const VALID = join(STATEMACHINES_DIR, 'warranty-email/samples/valid-warranty.eml');
const CHECKED_SERIAL = 'SN48213';

/**
 * The offline rules everywhere but in step 03a, where the model does what an injected email would
 * ask: first a ticket for another device, then (told it may not) a ticket without the serial.
 */
function hostileAt03a(attempts: Record<string, unknown>[]): ModelProvider {
  const offline = OfflineModel.forWorkflow(loadWorkflow('warranty-email'));
  return {
    name: 'bedrock',
    async converse(request: ConverseRequest) {
      if (readStepContext(request)?.step !== '03a-valid-warranty') return offline.converse(request);
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      const content: ContentBlock[] = [
        { toolUse: { toolUseId: `t${turn}`, name: 'create_ticket', input: attempts[turn] } },
      ];
      return {
        output: { message: { role: 'assistant', content } },
        stopReason: 'tool_use',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      };
    },
  };
}

describe('bound tool arguments in the warranty agent', () => {
  let session: WorkflowSession;
  beforeAll(async () => {
    session = await WorkflowSession.start({
      workflow: 'warranty-email',
      historyDir: false,
      logLevel: 'SILENT',
      services: {
        model: hostileAt03a([
          { serialNumber: 'SN99999', product: 'Someone else’s laptop', issueSummary: 'Broken.', priority: 'high' },
          { issueSummary: 'The headphones stopped charging.' },
        ]),
      },
    });
  });
  afterAll(() => session?.close());

  it('refuses a model-chosen serial, records the refusal, and opens the one ticket for the checked serial', async () => {
    const result = await session.deliverFile(VALID);
    expect(result.status).toBe('SUCCEEDED');
    const calls = result.toolCalls.filter((c) => c.tool === 'create_ticket');
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ step: '03a-valid-warranty', result: null, args: { serialNumber: 'SN99999' } });
    expect(calls[0]!.error).toMatch(
      /^ToolInputError: argument "serialNumber" is bound from data\.warranty\.serialNumber in step 03a-valid-warranty/,
    );
    expect(calls[1]).toMatchObject({
      args: { serialNumber: CHECKED_SERIAL, product: 'Lumen X2 wireless headphones' },
      result: { status: 'open' },
    });

    const tickets = await DynamoDBDocumentClient.from(session.dynamo.client).send(
      new ScanCommand({ TableName: session.tables.TICKETS_TABLE }),
    );
    expect(tickets.Items?.map((t) => t.serialNumber)).toEqual([CHECKED_SERIAL]);

    // The refusal is in the event log too (without the personal serial argument).
    const events = await session.events(result.executionName!);
    const step03a = events.find((e) => e.type === 'StepCompleted' && e.step === '03a-valid-warranty');
    expect(step03a).toMatchObject({
      toolCalls: [
        { tool: 'create_ticket', outcome: 'error' },
        { tool: 'create_ticket', outcome: 'ok' },
      ],
    });
    expect(JSON.stringify(step03a)).not.toContain('SN99999');
  });

  it('routes a single-edge step without a route call: one model call per successful turn', async () => {
    const result = await session.deliverEmail(
      readFileSync(VALID, 'utf8').replace(/^Message-ID: .*$/m, 'Message-ID: <second-delivery@example.org>'),
      'valid-again.eml',
    );
    const calls = Object.fromEntries(result.steps.map((s) => [s.name, s.usage?.modelCalls]));
    // 01: the workflow's fast path decides a clear claim without the model; 03a: the refused turn and the
    // successful one; 05: the reply, then DONE without a route turn.
    expect(calls).toEqual({
      '01-extract-serial': 0,
      '02-check-warranty': 0,
      '03a-valid-warranty': 2,
      '05-send-confirmation': 1,
    });
    expect(result.usage?.modelCalls).toBe(3);
  });
});
