/** The state-size guard's pieces: offloading past the budget, resolving pointers, and the step handler between them. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import sendEmail from '../../lambdas/workflows/warranty-email/tools/send-email.ts';
import { StateTooLargeError } from '../../src/core/errors.ts';
import type { ConverseRequest, ModelProvider } from '../../src/runtime/contracts/model-port.ts';
import { readStepContext } from '../../src/runtime/contracts/prompt.ts';
import type { StepOutput } from '../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../src/runtime/event-log.ts';
import {
  isOffloaded,
  memoryValueStore,
  type Offloaded,
  offloadLargeFields,
  payloadBytes,
  resolveOffloaded,
} from '../../src/runtime/offload.ts';
import { createHandler } from '../../src/runtime/step-handler/handler.ts';
import type { Toolbox } from '../../src/runtime/tools/types.ts';
import { inboundEmail, previousState, stepInput } from '../runtime/steps/fixtures.ts';

const usage = { modelCalls: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 };
const output = (fields: Record<string, unknown>, earlier: Record<string, unknown> = {}): StepOutput => ({
  step: '01-produce',
  next: '02-consume',
  reason: 'ok',
  decidedBy: 'code',
  fields,
  data: { ...earlier, ...fields },
  count: 1,
  toolCalls: [],
  usage,
  durationMs: 1,
});

describe('offloadLargeFields', () => {
  it('returns an output within the budget unchanged, without writing', async () => {
    const store = memoryValueStore();
    const small = output({ a: 'x'.repeat(1000) });
    expect(await offloadLargeFields(small, () => store, 'exec-1', 64 * 1024)).toEqual({ output: small, moved: [] });
    expect(store.items.size).toBe(0);
  });

  it('moves the largest values first, in chunks, until the output fits; earlier pointers in data stay', async () => {
    const store = memoryValueStore();
    const earlier = { old: { $offloaded: { key: 'VAL#0000#x#old#0', chunks: 1, bytes: 2, sha256: 'a'.repeat(64) } } };
    const big = output({ huge: 'h'.repeat(700 * 1024), medium: 'm'.repeat(20 * 1024), tiny: 't' }, earlier);
    const { output: guarded, moved } = await offloadLargeFields(big, () => store, 'exec-1', 64 * 1024);
    expect(moved).toEqual(['huge']);
    expect(payloadBytes(guarded)).toBeLessThanOrEqual(64 * 1024);
    const pointer = guarded.fields.huge as Offloaded;
    expect(isOffloaded(pointer)).toBe(true);
    expect(pointer.$offloaded).toMatchObject({ chunks: 3, bytes: 700 * 1024 + 2 });
    expect(guarded.data).toEqual({ ...earlier, huge: pointer, medium: big.fields.medium, tiny: 't' });
    expect(store.items.size).toBe(3);

    const resolved = await resolveOffloaded(guarded.data, () => store, 'exec-1').catch((e: Error) => e);
    // `old` was never stored in this store: a pointer without its value is an error, not a silent undefined.
    expect(resolved).toBeInstanceOf(StateTooLargeError);
    const { old: _, ...mine } = guarded.data;
    expect(await resolveOffloaded(mine, () => store, 'exec-1')).toEqual({
      huge: big.fields.huge,
      medium: big.fields.medium,
      tiny: 't',
    });
  });

  it('writes the same items when a step is retried with the same output', async () => {
    const store = memoryValueStore();
    const big = output({ huge: 'h'.repeat(100 * 1024) });
    const first = await offloadLargeFields(big, () => store, 'exec-1');
    const second = await offloadLargeFields(big, () => store, 'exec-1');
    expect(second.output).toEqual(first.output);
    expect(store.items.size).toBe(1);
  });

  it('refuses an output that cannot fit (the tool calls are too large) with a typed error the ASL Catch handles', async () => {
    const big = { ...output({}), toolCalls: [{ tool: 't', args: { x: 'y'.repeat(100 * 1024) }, result: null }] };
    await expect(offloadLargeFields(big, () => memoryValueStore(), 'exec-1')).rejects.toThrow(StateTooLargeError);
  });

  it('measures what the handler returns: tool results its summary drops (prod) do not count', async () => {
    const big = { ...output({}), toolCalls: [{ tool: 't', args: {}, result: 'r'.repeat(100 * 1024) }] };
    const summary = (o: StepOutput) => payloadBytes({ ...o, toolCalls: o.toolCalls.map(({ tool }) => ({ tool })) });
    expect(await offloadLargeFields(big, () => memoryValueStore(), 'exec-1', 64 * 1024, summary)).toEqual({
      output: big,
      moved: [],
    });
  });

  it('detects an altered value', async () => {
    const store = memoryValueStore();
    const { output: guarded } = await offloadLargeFields(
      output({ huge: 'h'.repeat(100 * 1024) }),
      () => store,
      'exec-1',
    );
    const [id, chunk] = [...store.items][0]!;
    store.items.set(id, new Uint8Array(chunk).fill(65, 5, 6));
    await expect(resolveOffloaded(guarded.fields, () => store, 'exec-1')).rejects.toThrow(/missing or altered/);
  });
});

describe('the step handler', () => {
  it('resolves offloaded values before the step runs: the model sees the value, the state keeps the pointer', async () => {
    const values = memoryValueStore();
    const ticket = JSON.stringify('TKT-OFFLOADED1');
    const bytes = Buffer.from(ticket);
    const key = 'VAL#0003#03a-valid-warranty#ticketId#0123456789abcdef';
    await values.put('exec-1', key, [bytes]);
    const pointer = {
      $offloaded: { key, chunks: 1, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') },
    };
    const email = inboundEmail();
    const input = stepInput('05-send-confirmation', {
      workflow: 'warranty-email',
      previous: previousState({
        step: '03a-valid-warranty',
        next: '05-send-confirmation',
        reason: 'ok',
        decidedBy: 'model',
        fields: { ticketId: pointer },
        data: { ticketId: pointer },
        count: 3,
      }),
    });
    let seen: unknown;
    const model: ModelProvider = {
      name: 'bedrock',
      converse: async (request: ConverseRequest) => {
        seen = readStepContext(request)?.data.ticketId;
        return {
          output: {
            message: {
              role: 'assistant',
              content: [
                { toolUse: { toolUseId: 't1', name: 'send_email', input: { body: `Ticket ${String(seen)}.` } } },
              ],
            },
          },
          stopReason: 'tool_use',
          usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
        };
      },
    };
    const toolbox: Toolbox = {
      spec: (name) => (name === 'send_email' ? sendEmail : undefined),
      execute: async (name, args) => ({
        tool: name,
        args: args as Record<string, unknown>,
        result: { sent: true, to: email.from, messageId: '<r1>' },
      }),
    };
    const handler = createHandler(
      { WORKFLOW: 'warranty-email', STEP: '05-send-confirmation', POWERTOOLS_LOG_LEVEL: 'SILENT' },
      { model, toolbox, values, events: memoryEventLog(), emails: { get: async () => ({ email, body: 'Broken.' }) } },
    );
    const out = (await handler(input)) as StepOutput;
    expect(out.reply).toBe('Ticket TKT-OFFLOADED1.');
    expect(out.data.ticketId).toEqual(pointer);
  });
});
