/** What a step Lambda returns is recorded in the execution history: in prod it carries no personal data. */
import { describe, expect, it } from 'vitest';
import sendEmail from '../../../lambdas/workflows/warranty-email/tools/send-email.ts';
import type { ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import type { StepInput, StepOutput } from '../../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { createHandler } from '../../../src/runtime/step-handler/handler.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';

const email = {
  id: 'e1',
  messageId: '<m1@x>',
  from: 'anna@example.com',
  fromName: 'Anna',
  to: ['claims@x'],
  subject: 'Broken',
  receivedAt: '2026-02-02T10:00:00.000Z',
  bodyChars: 5,
};
const input: StepInput = {
  workflow: 'warranty-email',
  step: '05-send-confirmation',
  input: { email },
  previous: {
    step: '03a-valid-warranty',
    next: '05-send-confirmation',
    reason: 'ok',
    decidedBy: 'model',
    fields: {},
    data: { ticketId: 'TKT-1' },
    count: 3,
  },
  error: null,
  count: 4,
  execution: { id: 'arn', name: 'exec-1' },
};
const model: ModelProvider = {
  name: 'bedrock',
  converse: async () => ({
    output: {
      message: {
        role: 'assistant',
        content: [{ toolUse: { toolUseId: 't1', name: 'send_email', input: { body: 'Hello Anna, ticket TKT-1.' } } }],
      },
    },
    stopReason: 'tool_use',
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
  }),
};
const toolbox: Toolbox = {
  spec: (name) => (name === 'send_email' ? sendEmail : undefined),
  execute: async (name, args) => ({
    tool: name,
    args: args as Record<string, unknown>,
    result: { sent: true, to: 'anna@example.com', messageId: '<r1>' },
  }),
};

async function run(STEP_OUTPUT: string) {
  const events = memoryEventLog();
  const handler = createHandler(
    { WORKFLOW: 'warranty-email', STEP: '05-send-confirmation', STEP_OUTPUT, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    { model, toolbox, events, emails: { get: async () => ({ email, body: 'Broken.' }) } },
  );
  const output = (await handler(input)) as StepOutput;
  return { output, logged: await events.list('exec-1') };
}

describe('step output in the execution history', () => {
  it('is complete where execution data may be logged (dev)', async () => {
    const { output } = await run('full');
    expect(output.reply).toBe('Hello Anna, ticket TKT-1.');
    expect(output.toolCalls[0]).toMatchObject({
      args: { body: 'Hello Anna, ticket TKT-1.' },
      result: { to: 'anna@example.com' },
    });
  });

  it('is a summary without reply text, personal arguments or results where it may not (prod); the event log keeps the details', async () => {
    const { output, logged } = await run('summary');
    expect(output.reply).toBeUndefined();
    expect(output.toolCalls).toEqual([{ tool: 'send_email', args: {}, result: { summarized: true } }]);
    expect(JSON.stringify(output)).not.toContain('anna@example.com');
    expect(output).toMatchObject({ next: 'DONE', data: { ticketId: 'TKT-1' }, count: 4 });
    expect(logged[0]).toMatchObject({
      type: 'StepCompleted',
      personal: { reply: 'Hello Anna, ticket TKT-1.', from: 'anna@example.com' },
    });
  });
});
