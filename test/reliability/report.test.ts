import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatReport, readFigures, RELIABILITY_TESTS } from './report.ts';
import { existsSync } from 'node:fs';
import { PROJECT_ROOT } from '../../lambdas/lib/workflow/loader.ts';

describe('the reliability report', () => {
  it('prints one line per guarantee, the last figure of each, and names a missing headline figure', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'figures-')), 'figures.jsonl');
    writeFileSync(
      file,
      ['{"guarantee":"injection","figure":"1/116 escaped"}', '{"guarantee":"load","figure":"300 emails"}', '{"guarantee":"injection","figure":"0/116 escaped"}', ''].join('\n'),
    );
    expect(formatReport(readFigures(file))).toEqual({
      lines: ['load: 300 emails', 'injection: 0/116 escaped', 'hostile-model: not measured'],
      missing: ['hostile-model'],
    });
  });

  it('reads nothing from a run that recorded nothing, and refuses a malformed line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'figures-'));
    expect(readFigures(join(dir, 'none.jsonl')).size).toBe(0);
    writeFileSync(join(dir, 'bad.jsonl'), '{"guarantee":""}\n');
    expect(() => readFigures(join(dir, 'bad.jsonl'))).toThrow();
  });

  it('runs test files that exist', () => {
    for (const path of RELIABILITY_TESTS) expect(existsSync(join(PROJECT_ROOT, path)), path).toBe(true);
  });
});
