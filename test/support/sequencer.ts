/**
 * Longest first, so the workers finish together instead of one worker starting the slowest file last; and one
 * vitest project after the other (the one with the longest file first), because a worker runs the files of one
 * project only: a file of the other project next in the queue would end it, and its successor would import the
 * engine, the CDK and the SDK again (on every switch: the two projects interleaved cost CI about 2 minutes).
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
    const longest = new Map<string, number>();
    for (const spec of files)
      longest.set(spec.project.name, Math.max(longest.get(spec.project.name) ?? 0, seconds(spec)));
    const projectRank = (spec: TestSpecification) => longest.get(spec.project.name)!;
    return [...files].sort(
      (a, b) =>
        projectRank(b) - projectRank(a) || a.project.name.localeCompare(b.project.name) || seconds(b) - seconds(a),
    );
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
