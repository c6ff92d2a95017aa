import { describe, expect, it } from 'vitest';
import {
  boundedTranscript,
  type ModelTranscript,
  TRANSCRIPT_MAX_BYTES,
} from '../../../src/runtime/contracts/transcript.ts';

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

function transcript(messages: number, chars: number): ModelTranscript {
  return {
    provider: 'bedrock',
    stepVersion: '1.0.0',
    system: [{ text: 'instruction '.repeat(chars / 12) }, { cachePoint: { type: 'default' } }],
    toolConfig: {
      tools: [
        {
          toolSpec: {
            name: 'lookup',
            description: 'Look up.',
            inputSchema: { json: { type: 'object', description: 'x'.repeat(chars) } },
          },
        },
      ],
    },
    messages: Array.from({ length: messages }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: [{ text: `message ${i} ${'é'.repeat(chars)}` }],
    })),
    calls: Array.from({ length: Math.floor(messages / 2) }, (_, i) => ({
      messages: 2 * i + 1,
      stopReason: 'tool_use',
      usage: { inputTokens: 10, outputTokens: 1, totalTokens: 11 },
      durationMs: 3,
    })),
  };
}

describe('boundedTranscript', () => {
  it('keeps a transcript that fits as it is', () => {
    const small = transcript(4, 100);
    expect(boundedTranscript(small)).toBe(small);
  });

  it.each([
    ['long texts', 4, 20_000],
    ['a long conversation', 200, 2_000],
  ])('cuts %s to the bound, keeps every call record, and says it cut', (_, messages, chars) => {
    const big = transcript(messages, chars);
    expect(bytes(big)).toBeGreaterThan(TRANSCRIPT_MAX_BYTES);
    const bounded = boundedTranscript(big);
    expect(bytes(bounded)).toBeLessThanOrEqual(TRANSCRIPT_MAX_BYTES);
    expect(bounded.truncated).toBe(true);
    expect(bounded.calls).toEqual(big.calls);
    expect(bounded.messages[0]!.content[0]).toMatchObject({
      text: expect.stringMatching(/^message 0 é+… \[\d+ characters cut\]$/),
    });
  });
});
