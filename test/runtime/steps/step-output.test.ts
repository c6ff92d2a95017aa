/** What a step Lambda returns is recorded in the execution history: in prod it carries no personal data. */
import { describe, expect, it } from 'vitest';
import type { StepOutput } from '../../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { createHandler } from '../../../src/runtime/step-handler/handler.ts';
import { fakeToolbox, inboundEmail, previousState, scriptedModel, stepInput, toolUse } from './fixtures.ts';

const email = inboundEmail();
const REPLY = 'Hello Nora, we filed follow-up CASE-1A2B3C4D5E.';
const input = stepInput('05-confirm', {
  previous: previousState({
    step: '03a-open-case',
    next: '05-confirm',
    reason: 'ok',
    decidedBy: 'model',
    data: { caseId: 'CASE-1A2B3C4D5E' },
    count: 3,
  }),
});

async function run(STEP_OUTPUT: string) {
  const events = memoryEventLog();
  const { model } = scriptedModel([[toolUse('send_email', { body: REPLY }, 't1')]]);
  const { toolbox } = fakeToolbox({ send_email: { sent: true, to: email.from, messageId: '<r1>' } });
  const handler = createHandler(
    { WORKFLOW: 'case-desk', STEP: '05-confirm', STEP_OUTPUT, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    { model, toolbox, events, emails: { get: async () => ({ email, body: 'Broken.' }) } },
  );
  const output = (await handler(input)) as StepOutput;
  return { output, logged: await events.list('exec-1') };
}

describe('step output in the execution history', () => {
  it('is complete where execution data may be logged (dev)', async () => {
    const { output } = await run('full');
    expect(output.reply).toBe(REPLY);
    expect(output.toolCalls[0]).toMatchObject({ args: { body: REPLY }, result: { to: email.from } });
  });

  it('is a summary without reply text, personal arguments or results where it may not (prod); the event log keeps the details', async () => {
    const { output, logged } = await run('summary');
    expect(output.reply).toBeUndefined();
    expect(output.toolCalls).toEqual([{ tool: 'send_email', args: {}, result: { summarized: true } }]);
    expect(JSON.stringify(output)).not.toContain(email.from);
    expect(output).toMatchObject({ next: 'DONE', data: { caseId: 'CASE-1A2B3C4D5E' }, count: 4 });
    expect(logged[0]).toMatchObject({ type: 'StepCompleted', personal: { reply: REPLY, from: email.from } });
  });
});
