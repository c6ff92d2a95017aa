import { describe, expect, it } from 'vitest';
import { runExitCode } from '../../src/cli/session-output.ts';
import type { RunResult } from '../../src/local/sessions/run-result.ts';

const none = { executionName: null, steps: [], toolCalls: [], outbox: [] };
const ok: RunResult = { file: 'a.json', status: 'SUCCEEDED', ...none };

describe('the exit code of stepwise run', () => {
  it('is 1 for an input the workflow’s input schema refuses', () => {
    const refused: RunResult = {
      file: 'bad.json',
      status: 'REJECTED',
      reason: "input does not match the workflow's input schema: missing field `customerId`",
      ...none,
    };
    expect(runExitCode([ok, refused])).toBe(1);
  });

  it('is 0 for mail the ingress refuses, which is a normal outcome', () => {
    const spam: RunResult = {
      file: 'spam.eml',
      messageId: '<x@example.com>',
      status: 'REJECTED',
      reason: 'spam',
      ...none,
    };
    expect(runExitCode([ok, spam])).toBe(0);
  });

  it('is 1 for a failed execution', () => {
    expect(runExitCode([{ ...ok, status: 'FAILED' }])).toBe(1);
  });
});
