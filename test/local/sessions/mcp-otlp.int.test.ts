/**
 * MCP tools and OpenTelemetry traces through the real CLI, in a copy of the project: a workflow's
 * tools come from a real MCP server on 127.0.0.1 (./../runtime/tools/mcp-server.ts), its model is a
 * scripted chat-completions endpoint (so calls have token counts), and every execution is exported
 * to an OTLP/HTTP receiver on 127.0.0.1. `stepwise mcp pull` pins the schemas, `stepwise validate`
 * fails in one line once the server changes one.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { toolCallReply } from '../../runtime/models/chat-server.ts';
import { CONTACT, CUSTOMER, MCP_WORKFLOW } from '../../runtime/tools/mcp-workflow.ts';
import { useMcpProject } from '../../support/mcp-project.ts';
import { attr, spansOf } from '../../support/otlp-receiver.ts';
import { stepwise } from '../../support/project-copy.ts';

const SLOW_CUSTOMER = 'C-0815';

/**
 * The scripted model. Step 01: read the orders, try to open a ticket for another customer (the
 * customer is bound), open it without, route on; for the slow customer it routes to 02 at once.
 * Step 02 calls the tool that never answers; the fallback routes on. Each call has its own token counts.
 */
function scripted(body: any) {
  const tools: string[] = (body.tools ?? []).map((t: any) => t.function.name);
  const turn = body.messages.filter((m: any) => m.role === 'tool').length;
  const usage = { prompt_tokens: 100 + 10 * turn, completion_tokens: 7 + turn, total_tokens: 107 + 11 * turn };
  if (tools.includes('search_orders')) {
    if (JSON.stringify(body.messages).includes(SLOW_CUSTOMER))
      return toolCallReply('route', { next: '02-wait', reason: 'slow', contact: CONTACT }, usage);
    const script: [string, unknown][] = [
      ['search_orders', { customerId: CUSTOMER, query: 'charger' }],
      ['open_ticket', { customerId: 'C-9999', summary: 'For someone else.' }],
      ['open_ticket', { summary: 'Charger missing from the parcel.' }],
      ['route', { next: 'DONE', reason: 'Ticket opened.', contact: CONTACT }],
    ];
    return toolCallReply(...script[Math.min(turn, 3)]!, usage);
  }
  if (tools.includes('slow_lookup') && turn === 0) return toolCallReply('slow_lookup', { id: 'O-1' }, usage);
  return toolCallReply('route', { next: 'DONE', reason: 'Handed off.' }, usage);
}

const project = useMcpProject('stepwise-mcp-', scripted);
beforeAll(() => {
  writeFileSync(
    join(project.dir, 'a-ticket.json'),
    JSON.stringify({ customerId: CUSTOMER, question: 'Where is my charger?' }),
  );
  writeFileSync(
    join(project.dir, 'b-slow.json'),
    JSON.stringify({ customerId: SLOW_CUSTOMER, question: 'And my cable?' }),
  );
});

describe('MCP tools and OTLP traces on the local runtime', () => {
  it('pins, runs both tools through the allow-list, refuses a bound argument, times out a silent server, and exports one trace per execution', {
    timeout: 480_000,
  }, async () => {
    const pulled = await stepwise(project.dir, 'mcp', 'pull', MCP_WORKFLOW, '--json');
    expect(pulled.code, pulled.err).toBe(0);
    expect(
      JSON.parse(pulled.out)
        .tools.map((t: any) => `${t.server}.${t.tool}:${t.change}`)
        .sort(),
    ).toEqual(['orders-slow.slow_lookup:added', 'orders.open_ticket:added', 'orders.search_orders:added']);
    const validated = await stepwise(project.dir, 'validate', MCP_WORKFLOW);
    expect(validated.code, validated.err).toBe(0);

    const ran = await stepwise(
      project.dir,
      'run',
      MCP_WORKFLOW,
      '--input',
      'a-ticket.json',
      '--input',
      'b-slow.json',
      '--json',
      ...['--model', 'openai', '--openai-base-url', project.modelUrl, '--openai-model', 'scripted-8b'],
      ...['--otlp', project.receiver.url],
    );
    expect(ran.code, ran.err).toBe(0);
    const [ticket, slow] = JSON.parse(ran.out);
    expect(ticket.status).toBe('SUCCEEDED');
    expect(ticket.toolCalls.map((c: any) => [c.tool, c.error?.split(':')[0] ?? 'ok'])).toEqual([
      ['search_orders', 'ok'],
      ['open_ticket', 'ToolInputError'],
      ['open_ticket', 'ok'],
    ]);
    expect(ticket.toolCalls[1].error).toContain('argument "customerId" is bound from input.customerId');
    expect(project.mcp.tickets).toEqual([{ customerId: CUSTOMER, summary: 'Charger missing from the parcel.' }]);
    expect(slow.steps.map((s: any) => [s.name, s.error?.split(':')[0]])).toEqual([
      ['01-look-up', undefined],
      ['02-wait', 'ToolUnavailableError'],
      ['03-hand-off', undefined],
    ]);

    expect(project.receiver.traces).toHaveLength(2);
    const spans = spansOf(project.receiver.traces[0]!);
    const roots = spans.filter((s) => !s.parentSpanId);
    expect(roots.map((s) => s.name)).toEqual([`workflow ${MCP_WORKFLOW}`]);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const named = (prefix: string) => spans.filter((s) => s.name.startsWith(prefix));
    expect(named('step ').map((s) => s.name)).toEqual(['step 01-look-up']);
    expect(named('chat ')).toHaveLength(4);
    expect(named('execute_tool ').map((s) => [s.name, attr(s, 'error.type')?.stringValue])).toEqual([
      ['execute_tool search_orders', undefined],
      ['execute_tool open_ticket', 'ToolInputError'],
      ['execute_tool open_ticket', undefined],
    ]);
    const sum = (key: string) => named('chat ').reduce((n, s) => n + Number(attr(s, key).intValue), 0);
    expect(sum('gen_ai.usage.input_tokens')).toBe(ticket.usage.inputTokens);
    expect(sum('gen_ai.usage.output_tokens')).toBe(ticket.usage.outputTokens);
    expect(ticket.usage.inputTokens).toBeGreaterThan(0);
    expect(attr(named('chat ')[0]!, 'gen_ai.system')).toEqual({ stringValue: 'openai' });

    const allSpans = project.receiver.traces.flatMap(spansOf);
    const values = JSON.stringify(allSpans.map((s) => [s.attributes, s.events]));
    for (const personal of [CUSTOMER, SLOW_CUSTOMER, CONTACT]) expect(values).not.toContain(personal);
    const slowTrace = spansOf(project.receiver.traces[1]!);
    expect(slowTrace.filter((s) => !s.parentSpanId)).toHaveLength(1);
    expect(slowTrace.find((s) => s.name === 'step 02-wait')?.status).toEqual({
      code: 2,
      message: 'ToolUnavailableError',
    });

    project.mcp.changeSchema();
    const changed = await stepwise(project.dir, 'validate', MCP_WORKFLOW);
    expect(changed.code).toBe(1);
    expect(changed.err.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^stepwise: statemachines\/orders-desk\/mcp\.lock\.json: servers\.orders\.tools\.open_ticket: the server's input schema changed/,
      ),
    ]);
  });
});
