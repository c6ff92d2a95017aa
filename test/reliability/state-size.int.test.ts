/**
 * The state-size guard end to end: a workflow added the way a user would (the big-output fixture
 * plugin, in a throwaway project copy) whose code step returns a value far past the 256 KiB state
 * limit still completes through the synthesized ASL in the local runtime (which fails an execution
 * at 256 KiB as AWS does); the state keeps a pointer, and the next step reads the value.
 */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import { STATE_BUDGET_BYTES } from '../../src/runtime/offload.ts';
import { copyBuiltProject } from '../support/built-package.ts';
import { stepwise } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';
import { recordFigure } from './figures.ts';

const tempDir = useTempDirs('stepwise-state-size-');

describe('the state-size guard', () => {
  let dir: string;
  beforeAll(() => {
    dir = copyBuiltProject(tempDir());
    cpSync(join(PROJECT_ROOT, 'test/fixtures/plugins/big-output'), dir, {
      recursive: true,
      filter: (src) => !src.endsWith('README.md'),
    });
  });

  it('completes a step that returns 1 MiB: the state holds a pointer, the next step reads the value', {
    timeout: 240_000,
  }, async () => {
    writeFileSync(join(dir, 'inputs.jsonl'), `${JSON.stringify({ kib: 1024 })}\n${JSON.stringify({ kib: 8 })}\n`);
    const ran = await stepwise(dir, 'run', 'big-output', '--input', 'inputs.jsonl', '--json');
    expect(ran.code, ran.err).toBe(0);
    const [big, small] = JSON.parse(ran.out) as {
      status: string;
      steps: { name: string; fields: Record<string, any> }[];
      output: any;
    }[];

    expect(big!.status).toBe('SUCCEEDED');
    expect(big!.steps.map((s) => s.name)).toEqual(['01-produce', '02-consume']);
    const [produce, consume] = big!.steps;
    expect(produce!.fields).toEqual({
      report: {
        $offloaded: {
          key: expect.stringMatching(/^VAL#0001#01-produce#report#/),
          chunks: 4,
          bytes: 1024 * 1024 + 1024 * 16 + 2 /* JSON: quotes and an escaped newline per line */,
          sha256: expect.any(String),
        },
      },
      label: 'inline',
    });
    expect(consume!.fields).toEqual({ reportChars: 1024 * 1024, reportEnd: `line 00016383 ${'x'.repeat(49)}\n` });
    // The final state carries the pointer, not the megabyte.
    const stateBytes = Buffer.byteLength(JSON.stringify(big!.output), 'utf8');
    expect(stateBytes).toBeLessThan(STATE_BUDGET_BYTES);

    // Under the budget nothing moves.
    expect(small!.status).toBe('SUCCEEDED');
    expect(small!.steps[0]!.fields.report).toHaveLength(8 * 1024);
    expect(small!.steps[1]!.fields.reportChars).toBe(8 * 1024);
    recordFigure(
      'state size',
      `a 1 MiB step output completed with a ${stateBytes}-byte final state (budget ${STATE_BUDGET_BYTES} bytes, limit 262144)`,
    );
  });
});
