import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import type { StepOutput } from '../../../src/runtime/contracts/step.ts';
import { eventSortKey, memoryEventLog, StepwiseEvent, stepCompletedEvent } from '../../../src/runtime/event-log.ts';
import { loggableArgs as keptArgs } from '../../../src/runtime/tools/types.ts';
import { WARRANTY_TOOLS } from '../tools/fixtures.ts';
import { eventLogConformance, step } from './conformance.ts';

eventLogConformance('memory', memoryEventLog);

const output = (over: Partial<StepOutput> = {}): StepOutput => ({
  step: '01-extract-serial',
  next: '02-check-warranty',
  reason: 'serial found',
  decidedBy: 'model',
  fields: { serialNumber: 'SN48213', issueSummary: 'Headphones do not charge.' },
  data: { serialNumber: 'SN48213' },
  count: 1,
  toolCalls: [],
  usage: { modelCalls: 2, inputTokens: 812, outputTokens: 64, cacheReadInputTokens: 700, cacheWriteInputTokens: 0 },
  durationMs: 930,
  ...over,
});

const tools: Record<string, (typeof WARRANTY_TOOLS)[keyof typeof WARRANTY_TOOLS]> = WARRANTY_TOOLS;
/** What the step handler passes: the call's arguments a known tool does not declare personal. */
const loggableArgs = (tool: string, args: Record<string, unknown>) => (tools[tool] ? keptArgs(tools[tool], args) : {});
/** The argument names of a tool the event log keeps. */
const loggableNames = (tool: string) =>
  Object.keys(tools[tool]!.input.shape).filter((arg) => !(tools[tool]!.personal ?? []).includes(arg));

describe('stepCompletedEvent', () => {
  it('records the routing decision, duration and token usage of a step', () => {
    const event = stepCompletedEvent(output(), {
      executionName: 'email-1',
      at: new Date('2026-11-21T12:00:00Z'),
      outputs: {
        serialNumber: { type: 'string', description: 'serial', pii: true },
        issueSummary: { type: 'string', description: 'fault', pii: false },
      },
      loggableArgs,
      from: 'maria.lopez@example.org',
    });
    expect(event).toEqual({
      type: 'StepCompleted',
      executionName: 'email-1',
      at: '2026-11-21T12:00:00.000Z',
      step: '01-extract-serial',
      count: 1,
      next: '02-check-warranty',
      reason: 'serial found',
      decidedBy: 'model',
      durationMs: 930,
      usage: { modelCalls: 2, inputTokens: 812, outputTokens: 64, cacheReadInputTokens: 700, cacheWriteInputTokens: 0 },
      toolCalls: [],
      fields: { issueSummary: 'Headphones do not charge.' },
      personal: { from: 'maria.lopez@example.org', fields: { serialNumber: 'SN48213' } },
    });
    expect(StepwiseEvent.parse(event)).toEqual(event);
  });

  it('keeps personal data only under personal: pii outputs, undeclared outputs, the reply', () => {
    const event = stepCompletedEvent(
      output({
        fields: { ticketId: 'TKT-1', customerPhone: '+44 20 7946 0000', extra: 'not declared' },
        reply: 'Dear Maria, ...',
      }),
      {
        executionName: 'email-1',
        at: new Date(),
        outputs: {
          ticketId: { type: 'string', description: 'id', pii: false },
          customerPhone: { type: 'string', description: 'phone', pii: true },
        },
        loggableArgs,
      },
    );
    expect(event.fields).toEqual({ ticketId: 'TKT-1' });
    expect(event.personal).toEqual({
      fields: { customerPhone: '+44 20 7946 0000', extra: 'not declared' },
      reply: 'Dear Maria, ...',
    });
  });

  it('summarises tool calls with outcome and only the loggable arguments', () => {
    const event = stepCompletedEvent(
      output({
        toolCalls: [
          { tool: 'check_warranty', args: { serialNumber: 'SN48213' }, result: { status: 'valid' } },
          {
            tool: 'create_ticket',
            args: { serialNumber: 'SN48213', issueSummary: 'Maria says it broke', priority: 'high' },
            result: { ticketId: 'TKT-1' },
          },
          { tool: 'send_email', args: { body: 'Dear Maria' }, error: 'ToolInputError: body: too long' },
          { tool: 'unknown_tool', args: { secret: 'x' }, error: 'ToolNotAllowedError: unknown tool "unknown_tool"' },
        ],
      }),
      { executionName: 'email-1', at: new Date(), outputs: {}, loggableArgs },
    );
    expect(event.toolCalls).toEqual([
      { tool: 'check_warranty', outcome: 'ok' },
      { tool: 'create_ticket', outcome: 'ok', args: { priority: 'high' } },
      { tool: 'send_email', outcome: 'error', error: 'ToolInputError: body: too long' },
      { tool: 'unknown_tool', outcome: 'error', error: 'ToolNotAllowedError: unknown tool "unknown_tool"' },
    ]);
    const { personal: _personal, ...plain } = event;
    expect(JSON.stringify(plain)).not.toMatch(/Maria|SN48213/);
  });
});

describe('the warranty workflow and its tools', () => {
  it('never log a pii output of a step as a tool argument', () => {
    for (const s of loadWorkflow('warranty-email').steps) {
      const pii = Object.entries(s.outputs)
        .filter(([, o]) => o.pii)
        .map(([name]) => name);
      for (const tool of s.tools) for (const arg of loggableNames(tool)) expect(pii).not.toContain(arg);
    }
    // Step outputs flow into later steps' tool arguments under the same names.
    const allPii = loadWorkflow('warranty-email').steps.flatMap((s) =>
      Object.entries(s.outputs)
        .filter(([, o]) => o.pii)
        .map(([n]) => n),
    );
    for (const tool of ['check_warranty', 'create_ticket', 'send_email'])
      for (const arg of loggableNames(tool)) expect(allPii).not.toContain(arg);
  });
});

describe('eventSortKey', () => {
  it('orders ingress first and steps by their position', () => {
    const keys = [step('e', 12), step('e', 3)].map((e) => eventSortKey(e));
    expect(keys).toEqual(['EVT#0012#step-12', 'EVT#0003#step-3']);
    expect([...keys, 'EVT#0000#INGRESS'].sort()).toEqual(['EVT#0000#INGRESS', 'EVT#0003#step-3', 'EVT#0012#step-12']);
  });
});
