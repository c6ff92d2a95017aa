/**
 * `stepwise eval --replay` survives what lies around in a recordings folder: a truncated or edited
 * recording fails only the step that needs it, named by file and line; a file that is no recording
 * (`.DS_Store`, a folder) is skipped with a warning that names it; reading the recorded models for
 * the report never throws, so the JSON and JUnit reports are always written.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BadRecordingError, ReplayModel, recordedModels, requestHash } from '../../src/evals/recordings.ts';
import type { ConverseRequest } from '../../src/runtime/contracts/model-port.ts';
import { contextMessage } from '../../src/runtime/contracts/prompt.ts';
import { previousState, stepInput } from '../runtime/steps/fixtures.ts';
import { recordFigure } from './figures.ts';

const dir = mkdtempSync(join(tmpdir(), 'recordings-'));
const STEP = '01-extract-serial';
const request = (n: number): ConverseRequest => ({
  system: [{ text: `prompt ${n}` }],
  messages: [
    contextMessage(
      stepInput(STEP, { previous: previousState({ next: STEP }) }),
      { input: ['email'], data: [] },
      undefined,
    ),
  ],
});
const good = (n: number) => ({
  step: STEP,
  provider: 'openai',
  model: 'scripted-8b',
  hash: requestHash(request(n)),
  request: request(n),
  response: {
    output: { message: { role: 'assistant', content: [{ text: 'NEXT_STEP: 04-out-of-scope' }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
  },
});
const file = (n: number) => join(dir, STEP, `${requestHash(request(n))}.json`);

mkdirSync(join(dir, STEP), { recursive: true });
writeFileSync(file(1), JSON.stringify(good(1), null, 2));
// Truncated in the middle of its response (line 9 of 10 kept).
writeFileSync(file(2), JSON.stringify(good(2), null, 2).split('\n').slice(0, 9).join('\n'));
// Valid JSON, but its stop reason was edited by hand: line 20.
writeFileSync(file(3), JSON.stringify({ ...good(3), response: { ...good(3).response, stopReason: 'done' } }, null, 2));
// What lies around: a Finder file at the top, an editor's backup and a folder among the recordings.
writeFileSync(join(dir, '.DS_Store'), 'Bud1\0\0');
writeFileSync(join(dir, STEP, 'notes.txt'), 'recorded on Tuesday');
mkdirSync(join(dir, STEP, 'old.json'));

let named = 0;
let bad = 0;
afterAll(() => {
  recordFigure('bad recordings', `${named}/${bad} named`);
  rmSync(dir, { recursive: true, force: true });
});

describe('replay of a recordings folder with bad and stray files', () => {
  it('answers from a good recording, and fails a truncated or edited one naming its file and line', async () => {
    const replay = new ReplayModel(dir);
    await expect(replay.converse(request(1))).resolves.toMatchObject({ stopReason: 'end_turn' });
    const cases: [number, RegExp][] = [
      [2, new RegExp(`${requestHash(request(2))}\\.json:\\d+: not JSON \\(`)],
      [3, new RegExp(`${requestHash(request(3))}\\.json:\\d+: not a recording: response\\.stopReason`)],
    ];
    for (const [n, message] of cases) {
      bad++;
      const error = await replay.converse(request(n)).catch((e: Error) => e);
      expect(error).toBeInstanceOf(BadRecordingError);
      expect((error as Error).message).toMatch(message);
      named++;
    }
    // The line is where the file breaks: the last line of the truncated one, the edited field's line.
    expect(((await replay.converse(request(2)).catch((e) => e)) as Error).message).toContain('.json:9:');
    const edited = ((await replay.converse(request(3)).catch((e) => e)) as Error).message;
    expect(edited).toMatch(/\.json:(\d+):/);
    expect(Number(/\.json:(\d+):/.exec(edited)![1])).toBe(
      JSON.stringify({ ...good(3), response: { ...good(3).response, stopReason: 'done' } }, null, 2)
        .split('\n')
        .findIndex((l) => l.includes('"stopReason"')) + 1,
    );
  });

  it('reads the recorded models for the report without throwing, naming every file it skipped or could not read', () => {
    const warnings: string[] = [];
    expect(recordedModels(dir, (m) => warnings.push(m))).toEqual(['openai scripted-8b']);
    const expected = [
      '.DS_Store',
      'notes.txt',
      'old.json',
      `${requestHash(request(2))}.json:9`,
      requestHash(request(3)),
    ];
    bad += 3;
    for (const name of expected.slice(0, 3)) {
      expect(warnings.some((w) => w.includes(name) && /skipped/.test(w))).toBe(true);
      named++;
    }
    for (const name of expected.slice(3)) expect(warnings.some((w) => w.includes(name))).toBe(true);
    expect(warnings).toHaveLength(5);
  });
});
