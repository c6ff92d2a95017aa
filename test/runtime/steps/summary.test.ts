import type { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import type { StepOutput } from '../../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { createHandler } from '../../../src/runtime/step-handler/handler.ts';
import { captureLogger, fakeToolbox, inboundEmail, previousState, stepInput } from './fixtures.ts';

describe('the final summary of an execution', () => {
  it('is only a log line: a step whose reply was sent still completes when the event log cannot be read', async () => {
    const events = memoryEventLog();
    const unreadable = {
      append: events.append,
      list: async () =>
        Promise.reject(Object.assign(new Error('not authorized to Query'), { name: 'AccessDeniedException' })),
    };
    const { logger, lines } = captureLogger();
    const handler = createHandler(
      { WORKFLOW: 'case-desk', STEP: '03c-ask-ref', MODEL_PROVIDER: 'offline' },
      {
        toolbox: fakeToolbox({ send_email: { sent: true } }).toolbox,
        events: unreadable,
        emails: { get: async () => ({ email: inboundEmail(), body: 'My lamp is broken.' }) },
        logger: logger as unknown as Logger,
      },
    );
    const input = stepInput('03c-ask-ref', {
      previous: previousState({ step: '01-read-request', next: '03c-ask-ref' }),
    });
    const out = (await handler(input)) as StepOutput;
    expect(out.next).toBe('DONE');
    expect(lines.some((l) => l.level === 'WARN' && /final summary/.test(l.message))).toBe(true);
  });
});
