import { describe, expect, it } from 'vitest';
import type { StepOutput } from '../../../src/runtime/contracts/step.ts';
import { eventSortKey, memoryEventLog, StepwiseEvent, stepCompletedEvent } from '../../../src/runtime/event-log.ts';
import { loggableArgs as keptArgs } from '../../../src/runtime/tools/types.ts';
import { DESK_TOOLS } from '../tools/fixtures.ts';
import { eventLogConformance, step } from './conformance.ts';

eventLogConformance('memory', memoryEventLog);

const output = (over: Partial<StepOutput> = {}): StepOutput => ({
  step: '01-read-request',
  next: '02-look-up',
  reason: 'reference found',
  decidedBy: 'model',
  fields: { caseRef: 'C-10001', summary: 'The desk lamp switches off.' },
  data: { caseRef: 'C-10001' },
  count: 1,
  toolCalls: [],
  usage: { modelCalls: 2, inputTokens: 812, outputTokens: 64, cacheReadInputTokens: 700, cacheWriteInputTokens: 0 },
  durationMs: 930,
  ...over,
});

const tools: Record<string, (typeof DESK_TOOLS)[keyof typeof DESK_TOOLS]> = DESK_TOOLS;
/** What the step handler passes: the call's arguments a known tool does not declare personal. */
const loggableArgs = (tool: string, args: Record<string, unknown>) => (tools[tool] ? keptArgs(tools[tool], args) : {});

describe('stepCompletedEvent', () => {
  it('records the routing decision, duration and token usage of a step', () => {
    const event = stepCompletedEvent(output(), {
      executionName: 'email-1',
      at: new Date('2026-11-21T12:00:00Z'),
      outputs: {
        caseRef: { type: 'string', description: 'reference', pii: true },
        summary: { type: 'string', description: 'issue', pii: false },
      },
      loggableArgs,
      from: 'nora.kent@example.org',
    });
    expect(event).toEqual({
      type: 'StepCompleted',
      executionName: 'email-1',
      at: '2026-11-21T12:00:00.000Z',
      step: '01-read-request',
      count: 1,
      next: '02-look-up',
      reason: 'reference found',
      decidedBy: 'model',
      durationMs: 930,
      usage: { modelCalls: 2, inputTokens: 812, outputTokens: 64, cacheReadInputTokens: 700, cacheWriteInputTokens: 0 },
      toolCalls: [],
      fields: { summary: 'The desk lamp switches off.' },
      personal: { from: 'nora.kent@example.org', fields: { caseRef: 'C-10001' } },
    });
    expect(StepwiseEvent.parse(event)).toEqual(event);
  });

  it('keeps personal data only under personal: pii outputs, undeclared outputs, the reply', () => {
    const event = stepCompletedEvent(
      output({
        fields: { caseId: 'CASE-1', customerPhone: '+44 20 7946 0000', extra: 'not declared' },
        reply: 'Dear Nora, ...',
      }),
      {
        executionName: 'email-1',
        at: new Date(),
        outputs: {
          caseId: { type: 'string', description: 'id', pii: false },
          customerPhone: { type: 'string', description: 'phone', pii: true },
        },
        loggableArgs,
      },
    );
    expect(event.fields).toEqual({ caseId: 'CASE-1' });
    expect(event.personal).toEqual({
      fields: { customerPhone: '+44 20 7946 0000', extra: 'not declared' },
      reply: 'Dear Nora, ...',
    });
  });

  it('summarises tool calls with outcome and only the loggable arguments', () => {
    const event = stepCompletedEvent(
      output({
        toolCalls: [
          { tool: 'lookup_case', args: { caseRef: 'C-10001' }, result: { status: 'open' } },
          {
            tool: 'open_case',
            args: { caseRef: 'C-10001', summary: 'Nora says it broke', priority: 'high' },
            result: { caseId: 'CASE-1' },
          },
          { tool: 'send_email', args: { body: 'Dear Nora' }, error: 'ToolInputError: body: too long' },
          { tool: 'unknown_tool', args: { secret: 'x' }, error: 'ToolNotAllowedError: unknown tool "unknown_tool"' },
        ],
      }),
      { executionName: 'email-1', at: new Date(), outputs: {}, loggableArgs },
    );
    expect(event.toolCalls).toEqual([
      { tool: 'lookup_case', outcome: 'ok' },
      { tool: 'open_case', outcome: 'ok', args: { priority: 'high' } },
      { tool: 'send_email', outcome: 'error', error: 'ToolInputError: body: too long' },
      { tool: 'unknown_tool', outcome: 'error', error: 'ToolNotAllowedError: unknown tool "unknown_tool"' },
    ]);
    const { personal: _personal, ...plain } = event;
    expect(JSON.stringify(plain)).not.toMatch(/Nora|C-10001/);
  });
});

describe('eventSortKey', () => {
  it('orders ingress first and steps by their position', () => {
    const keys = [step('e', 12), step('e', 3)].map((e) => eventSortKey(e));
    expect(keys).toEqual(['EVT#0012#step-12', 'EVT#0003#step-3']);
    expect([...keys, 'EVT#0000#INGRESS'].sort()).toEqual(['EVT#0000#INGRESS', 'EVT#0003#step-3', 'EVT#0012#step-12']);
  });
});
