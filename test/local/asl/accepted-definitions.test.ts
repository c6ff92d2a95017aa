/**
 * A state machine definition the local interpreter's validator accepted is not validated again by the next command
 * that runs it (asl-validator compiles its schemas on every call: most of a warm `stepwise run`'s CPU), and a
 * definition it refused is refused every time.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StateMachineDefinition } from 'aws-local-stepfunctions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acceptedMark, interpreterFor } from '../../../src/local/asl/state-machines.ts';

const valid = (comment: string): StateMachineDefinition => ({
  Comment: comment,
  StartAt: 'Done',
  States: { Done: { Type: 'Succeed' } },
});
/** A Choice state without Choices: asl-validator refuses it. */
const invalid = (comment: string) =>
  ({ Comment: comment, StartAt: 'Route', States: { Route: { Type: 'Choice' } } }) as unknown as StateMachineDefinition;

describe('definitions the interpreter accepted', () => {
  let cache: string;
  const previous = process.env.STEPWISE_CACHE_DIR;
  beforeEach(() => {
    cache = mkdtempSync(join(tmpdir(), 'stepwise-accepted-'));
    process.env.STEPWISE_CACHE_DIR = cache;
  });
  afterEach(() => {
    if (previous === undefined) delete process.env.STEPWISE_CACHE_DIR;
    else process.env.STEPWISE_CACHE_DIR = previous;
  });
  const marks = () => (existsSync(join(cache, 'asl-accepted')) ? readdirSync(join(cache, 'asl-accepted')) : []);

  it('are marked in the user cache once accepted, and a refused one is never marked', () => {
    const comment = `accepted ${cache}`;
    expect(() => interpreterFor(valid(comment))).not.toThrow();
    expect(marks()).toHaveLength(1);
    expect(() => interpreterFor(invalid(`refused ${cache}`))).toThrow();
    expect(() => interpreterFor(invalid(`refused ${cache}`))).toThrow();
    expect(marks()).toHaveLength(1);
  });

  it('skip the validator for a marked definition only: a mark another process left is trusted, text for text', () => {
    const marked = invalid(`marked ${cache}`);
    mkdirSync(join(cache, 'asl-accepted'), { recursive: true });
    writeFileSync(acceptedMark(JSON.stringify(marked)), '');
    expect(() => interpreterFor(marked)).not.toThrow();
    expect(() => interpreterFor(invalid(`unmarked ${cache}`))).toThrow();
  });
});
