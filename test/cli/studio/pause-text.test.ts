import { describe, expect, it } from 'vitest';
import { actionLines, EMPTY_OUTPUT } from '../../../src/cli/studio/ui/pause-text.ts';

describe("a checkpoint's required actions in Studio", () => {
  it('shows fixed instructions as the lines written, not JSON-escaped', () => {
    expect(actionLines('Check the "latency" graph.\nWrite what you found.')).toEqual([
      'Check the "latency" graph.',
      'Write what you found.',
    ]);
  });

  it('lists a step output of actions one by one, objects as JSON', () => {
    expect(actionLines(['call the customer', { approve: 'refund' }])).toEqual([
      'call the customer',
      '{"approve":"refund"}',
    ]);
    expect(actionLines(null)).toEqual([]);
  });

  it('starts the approve box empty, with no field the step did not ask for', () => {
    expect(JSON.parse(EMPTY_OUTPUT)).toEqual({});
  });
});
