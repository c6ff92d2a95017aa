/**
 * MCP tools in evals, and eval executions as OpenTelemetry traces, through the real CLI in a copy of
 * the project: the case mocks the workflow's MCP tools as it mocks native ones (the server is
 * stopped once the schemas are pinned, so no call can reach it), the model is a scripted
 * chat-completions endpoint, and `stepwise eval --otlp` sends each case's execution to an OTLP/HTTP
 * receiver on 127.0.0.1.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { toolCallReply } from '../runtime/models/chat-server.ts';
import { CONTACT, CUSTOMER, MCP_WORKFLOW } from '../runtime/tools/mcp-workflow.ts';
import { useMcpProject } from '../support/mcp-project.ts';
import { attr, spansOf } from '../support/otlp-receiver.ts';
import { stepwise } from '../support/project-copy.ts';

/** Step 01 reads the orders, opens a ticket (its customer bound), then routes on; every call has token counts. */
function scripted(body: any) {
  const turn = body.messages.filter((m: any) => m.role === 'tool').length;
  const usage = { prompt_tokens: 120 + turn, completion_tokens: 9, total_tokens: 129 + turn };
  const script: [string, unknown][] = [
    ['search_orders', { customerId: CUSTOMER, query: 'charger' }],
    ['open_ticket', { summary: 'Charger missing from the parcel.' }],
    ['route', { next: 'DONE', reason: 'Ticket opened.', contact: CONTACT }],
  ];
  return toolCallReply(...script[Math.min(turn, 2)]!, usage);
}

const CASE = `scenario_id: mcp_mocked_001
description: The MCP tools answered by the case's mocks.
category: mcp
input:
  payload: { customerId: ${CUSTOMER}, question: "Where is my charger?" }
  mock_function_responses:
    search_orders: { orders: [{ id: O-7, item: charger (mocked) }] }
    open_ticket: { ticketId: T-MOCK-1 }
expected_output:
  status: SUCCEEDED
  expected_steps:
    - step_name: 01-look-up
  expected_function_calls: [search_orders, open_ticket]
`;

const project = useMcpProject('stepwise-mcp-eval-', scripted);
beforeAll(() => {
  mkdirSync(join(project.dir, 'cases'));
  writeFileSync(join(project.dir, 'cases', 'mcp_mocked_001.yaml'), CASE);
});

describe('stepwise eval with MCP tools and --otlp', () => {
  it('answers MCP tools from the case mocks without the server, and exports the case execution with the served model', {
    timeout: 480_000,
  }, async () => {
    const pulled = await stepwise(project.dir, 'mcp', 'pull', MCP_WORKFLOW);
    expect(pulled.code, pulled.err).toBe(0);
    await project.mcp.close();

    const ran = await stepwise(
      project.dir,
      ...['eval', MCP_WORKFLOW, '--cases', 'cases', '--json'],
      ...['--model', 'openai', '--openai-base-url', project.modelUrl, '--openai-model', 'scripted-8b'],
      ...['--otlp', project.receiver.url],
    );
    expect(ran.code, ran.err).toBe(0);
    const report = JSON.parse(ran.out);
    expect(report.cases.map((c: any) => [c.id, c.passed, c.failures])).toEqual([['mcp_mocked_001', true, []]]);
    expect(project.mcp.calls).toEqual([]);

    expect(project.receiver.traces).toHaveLength(1);
    const spans = spansOf(project.receiver.traces[0]!);
    expect(spans.filter((s) => !s.parentSpanId).map((s) => s.name)).toEqual([`workflow ${MCP_WORKFLOW}`]);
    expect(spans.filter((s) => s.name.startsWith('step ')).map((s) => s.name)).toEqual(['step 01-look-up']);
    expect(spans.filter((s) => s.name.startsWith('execute_tool ')).map((s) => s.name)).toEqual([
      'execute_tool search_orders',
      'execute_tool open_ticket',
    ]);
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    expect(chats).toHaveLength(3);
    for (const chat of chats) expect(attr(chat, 'gen_ai.request.model')).toEqual({ stringValue: 'scripted-8b' });
    const values = JSON.stringify(spans.map((s) => [s.attributes, s.events]));
    for (const personal of [CUSTOMER, CONTACT]) expect(values).not.toContain(personal);
  });
});
