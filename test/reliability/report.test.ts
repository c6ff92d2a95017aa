import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import { formatReport, RELIABILITY_TESTS, readFigures } from './report.ts';

describe('the reliability report', () => {
  it('prints one line per guarantee, the last figure of each, and names a missing headline figure', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'figures-')), 'figures.jsonl');
    writeFileSync(
      file,
      [
        '{"guarantee":"injection","figure":"1/116 escaped"}',
        '{"guarantee":"load","figure":"300 emails"}',
        '{"guarantee":"injection","figure":"0/116 escaped"}',
        '',
      ].join('\n'),
    );
    expect(formatReport(readFigures(file))).toEqual({
      lines: [
        'load: 300 emails',
        'injection: 0/116 escaped',
        'hostile-model: not measured',
        'hostile replies quoting the sender: not measured',
        'concurrent resumes: not measured',
        'oversize lead events: not measured',
        'judge without a verdict: not measured',
        'single-prompt rollback: not measured',
        'hung model endpoint: not measured',
        'bad recordings: not measured',
        'definition parse: not measured',
      ],
      missing: [
        'hostile-model',
        'hostile replies quoting the sender',
        'concurrent resumes',
        'oversize lead events',
        'judge without a verdict',
        'single-prompt rollback',
        'hung model endpoint',
        'bad recordings',
        'definition parse',
      ],
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

describe('docs/guarantees.md', () => {
  const doc = readFileSync(join(PROJECT_ROOT, 'docs/guarantees.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `(test\/[^`]+)`[^|]*\| (.+) \|$/gm)].map(([, file, name]) => ({
    file: file!,
    name: name!,
  }));

  it('names every guarantee of the issue, and the figures lines', () => {
    for (const heading of [
      'Exactly one effect per inbound email and per CRM event',
      'No lost lead update',
      'No silent event loss',
      'Routing never leaves the declared graph',
      'Tool arguments that matter come from state',
      'State under 256 KB and history under 25,000 events',
      'Every refusal recorded with a reason',
    ])
      expect(doc).toContain(heading);
    expect(doc).toContain('`injection: E/N escaped`');
    expect(doc).toContain('`hostile-model: E/N escaped`');
    expect(doc).toContain('`hostile replies quoting the sender: X/N`');
    expect(doc).toContain('`concurrent resumes: 1 of N ran`');
    expect(doc).toContain('`oversize lead events: N/N accounted`');
  });

  it('cites test files that exist and test names they contain', () => {
    expect(rows.length).toBeGreaterThan(20);
    for (const { file, name } of rows) {
      const text = readFileSync(join(PROJECT_ROOT, file), 'utf8');
      // A trailing "(...)" says what the test shows; "/" and ";" separate several tests; `<x>` stands for a parameter.
      const parts = name
        .replace(/ \([^()]*\)$/, '')
        .split(/ \/ |; /)
        .filter((p) => !p.includes('<'));
      for (const part of parts) expect(text, `${file}: "${part}"`).toContain(part);
    }
  });
});
