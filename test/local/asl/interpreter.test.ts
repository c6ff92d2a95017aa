import fc from 'fast-check';
import { JSONPath } from 'jsonpath-plus';
import { describe, expect, it } from 'vitest';
import {
  allStates,
  interpreterDefinition,
  NOT_A_REFERENCE,
  referenceValue,
} from '../../../src/local/asl/interpreter.ts';
import {
  checkStatePayload,
  PAYLOAD_LIMIT_BYTES,
  StateDataLimitExceededError,
  textBytes,
} from '../../../src/local/asl/limits.ts';

const task = (extra: object = {}) => ({
  Type: 'Task',
  Resource: 'arn:aws:lambda:us-east-1:1:function:f',
  End: true,
  ...extra,
});
const definition = {
  StartAt: 'Plain',
  States: {
    Plain: { ...task(), End: undefined, Next: 'Fan' },
    Fan: {
      Type: 'Map',
      ItemProcessor: {
        StartAt: 'Bounded',
        States: {
          Bounded: task({
            TimeoutSeconds: 30,
            HeartbeatSeconds: 5,
            Catch: [{ ErrorEquals: ['States.HeartbeatTimeout', 'X'], Next: 'Bounded' }],
          }),
        },
      },
      Next: 'Fork',
    },
    Fork: {
      Type: 'Parallel',
      Branches: [
        { StartAt: 'Timed', States: { Timed: task({ TimeoutSeconds: 7 }) } },
        { StartAt: 'Dynamic', States: { Dynamic: task({ TimeoutSecondsPath: '$.t' }) } },
      ],
      End: true,
    },
  },
} as never;

describe('interpreterDefinition', () => {
  it('gives every Task, at any depth, exactly the declared timeout (the earlier of timeout and heartbeat), and none where none is declared', () => {
    const prepared = interpreterDefinition(definition);
    const timeouts = Object.fromEntries(
      [...allStates(prepared)].filter(([, s]) => s.Type === 'Task').map(([n, s]) => [n, s.TimeoutSeconds]),
    );
    // The interpreter's own default would be 60 s; "none" is the longest timer Node.js can set.
    expect(timeouts).toEqual({ Plain: 2_147_483, Bounded: 5, Timed: 7, Dynamic: undefined });
    expect([...allStates(definition)].find(([n]) => n === 'Plain')![1].TimeoutSeconds).toBeUndefined();
  });

  it('lets States.HeartbeatTimeout in Retry/Catch match a heartbeat timeout (reported as States.Timeout)', () => {
    const bounded = [...allStates(interpreterDefinition(definition))].find(([n]) => n === 'Bounded')![1];
    expect(bounded.Catch[0].ErrorEquals).toEqual(['States.Timeout', 'X']);
  });
});

describe('payload quota', () => {
  it('counts UTF-8 bytes of the JSON text and refuses one byte over 256 KiB', () => {
    expect(textBytes(JSON.stringify('é'))).toBe(4);
    const atLimit = 'x'.repeat(PAYLOAD_LIMIT_BYTES - 2);
    expect(textBytes(JSON.stringify(atLimit))).toBe(PAYLOAD_LIMIT_BYTES);
    expect(() => checkStatePayload('S', 'output', JSON.stringify(atLimit))).not.toThrow();
    const over = () => checkStatePayload('S', 'output', JSON.stringify(`${atLimit}x`));
    expect(over).toThrow(StateDataLimitExceededError);
    expect(over).toThrow(
      "The state/task 'S' returned a result with a size exceeding the maximum number of bytes service limit.",
    );
  });
});

describe('reference paths read directly', () => {
  // This file never starts a runtime, so JSONPath here is jsonpath-plus as shipped.
  const jsonPath = (json: unknown, path: string) => JSONPath({ path, json: json as object, wrap: false });
  const names = fc.constantFrom('a', 'b', 'type', 'length', 'toString', '__proto__', 'x_1');

  it('finds what jsonpath-plus finds, or leaves the path to it', () => {
    fc.assert(
      fc.property(
        fc.dictionary(names, fc.jsonValue({ maxDepth: 3 })),
        fc.array(names, { minLength: 1, maxLength: 4 }),
        (doc, path) => {
          const text = `$.${path.join('.')}`;
          const direct = referenceValue(doc, text);
          if (direct !== NOT_A_REFERENCE) expect(direct).toStrictEqual(jsonPath(doc, text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads through plain objects only, and only plain names', () => {
    const doc = { loaded: { member: { state: 'engaged', version: 0, done: false }, list: [1, 2], text: 'abc' } };
    expect(referenceValue(doc, '$.loaded.member.state')).toBe('engaged');
    expect(referenceValue(doc, '$.loaded.member.version')).toBe(0);
    expect(referenceValue(doc, '$.loaded.member.done')).toBe(false);
    expect(referenceValue(doc, '$.loaded.missing.state')).toBeUndefined();
    // jsonpath-plus reads `length` of arrays and strings: left to it.
    for (const path of [
      '$.loaded.list.length',
      '$.loaded.text.length',
      '$.loaded.list[0]',
      "$.loaded['member']",
      '$..state',
      '$.loaded.*',
      '$',
    ]) {
      expect(referenceValue(doc, path)).toBe(NOT_A_REFERENCE);
    }
  });
});
