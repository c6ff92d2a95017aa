/**
 * Longest first, so the workers finish together instead of one worker starting the slowest file last.
 * The durations are those of a CI run (`test/durations.json`, refreshed with
 * `npx tsx test/support/sequencer.ts test-results.json` after `.ci/run`); a file not in it counts as a short one of
 * its tier (integration or unit).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const DURATIONS_FILE = new URL('../durations.json', import.meta.url);

const guess = (file: string) => (file.endsWith('.int.test.ts') ? 5 : 0.5);

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    let durations: Record<string, number> = {};
    try {
      durations = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
    } catch {
      return super.sort(files);
    }
    const seconds = (spec: TestSpecification) => {
      const file = relative(this.ctx.config.root, spec.moduleId);
      return durations[file] ?? guess(file);
    };
    return [...files].sort((a, b) => seconds(b) - seconds(a));
  }
}

// Run as a script: write the durations of a vitest JSON report (`--reporter=json --outputFile.json=FILE`).
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const report = JSON.parse(readFileSync(process.argv[2] ?? 'test-results.json', 'utf8')) as {
    testResults: { name: string; startTime: number; endTime: number }[];
  };
  const root = new URL('../..', import.meta.url).pathname;
  const durations = Object.fromEntries(
    report.testResults
      .map((r) => [relative(root, r.name), Math.round((r.endTime - r.startTime) / 100) / 10] as const)
      .sort((a, b) => b[1] - a[1]),
  );
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(durations, null, 2)}\n`);
}
