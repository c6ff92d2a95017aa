/**
 * The EventLog conformance suite: every adapter must pass it (memory in the unit tier, DynamoDB Local in the
 * integration tier).
 */
import { describe, expect, it } from 'vitest';
import type { EventLog, StepCompletedEvent, StepwiseEvent } from '../../../src/runtime/event-log.ts';

export const step = (executionName: string, count: number, stepName = `step-${count}`): StepCompletedEvent => ({
  type: 'StepCompleted',
  executionName,
  at: `2026-11-21T12:00:${String(count).padStart(2, '0')}.000Z`,
  step: stepName,
  count,
  next: 'DONE',
  reason: 'test',
  decidedBy: 'code',
  durationMs: 5,
  usage: { modelCalls: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
  toolCalls: [],
  fields: {},
  personal: { fields: {} },
});

const accepted = (executionName: string): StepwiseEvent => ({
  type: 'IngressAccepted',
  executionName,
  at: '2026-11-21T11:59:59.000Z',
  emailId: 'ses-1',
  bodyChars: 120,
  personal: { from: 'maria.lopez@example.org', subject: 'Broken headphones' },
});

export function eventLogConformance(adapter: string, create: () => EventLog): void {
  describe(`EventLog conformance: ${adapter}`, () => {
    it('lists an execution oldest first: ingress, then steps by position (10 after 9)', async () => {
      const log = create();
      const name = `${adapter}-order`;
      for (const count of [10, 2, 9, 1]) expect(await log.append(step(name, count))).toBe(true);
      expect(await log.append(accepted(name))).toBe(true);
      const events = await log.list(name);
      expect(events.map((e) => (e.type === 'StepCompleted' ? e.count : e.type))).toEqual([
        'IngressAccepted',
        1,
        2,
        9,
        10,
      ]);
      expect(events[0]).toEqual(accepted(name));
      expect(events[1]).toEqual(step(name, 1));
    });

    it('writes an event once: a retried or conflicting append changes nothing', async () => {
      const log = create();
      const name = `${adapter}-immutable`;
      expect(await log.append(step(name, 1))).toBe(true);
      expect(await log.append(step(name, 1))).toBe(false);
      expect(await log.append({ ...step(name, 1), next: '04-out-of-scope', reason: 'rewritten' })).toBe(false);
      expect(await log.list(name)).toEqual([step(name, 1)]);
    });

    it('holds one ingress decision per mail', async () => {
      const log = create();
      const name = `${adapter}-ingress`;
      expect(await log.append(accepted(name))).toBe(true);
      const rejected: StepwiseEvent = {
        type: 'IngressRejected',
        executionName: name,
        at: '2026-11-21T12:00:00.000Z',
        emailId: 'ses-1',
        reason: 'spam',
        detail: 'spamVerdict: FAIL',
        personal: {},
      };
      expect(await log.append(rejected)).toBe(false);
      expect((await log.list(name)).map((e) => e.type)).toEqual(['IngressAccepted']);
    });

    it('keeps executions apart', async () => {
      const log = create();
      await log.append(step(`${adapter}-a`, 1));
      expect(await log.list(`${adapter}-b`)).toEqual([]);
      expect(await log.list(`${adapter}-a`)).toHaveLength(1);
    });

    it('refuses an event that does not match its schema', async () => {
      const log = create();
      const bad = {
        ...step(`${adapter}-bad`, 1),
        personal: undefined,
        from: 'maria.lopez@example.org',
      } as unknown as StepwiseEvent;
      await expect(log.append(bad)).rejects.toThrow();
      expect(await log.list(`${adapter}-bad`)).toEqual([]);
    });
  });
}
