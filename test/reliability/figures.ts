/**
 * The figures the reliability tests measure, one line per guarantee: printed by
 * `npm run test:reliability` after the run (test/reliability/report.ts) and kept in
 * `.stepwise/reliability/` so one run's files add up.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { STATE_DIR as STEPWISE_DIR } from '../../src/core/paths.ts';

export const FIGURES_FILE = join(STEPWISE_DIR, 'reliability', 'figures.jsonl');

/** Record one guarantee's figure, e.g. `recordFigure('injection', '0/52 escaped')`. */
export function recordFigure(guarantee: string, figure: string): void {
  mkdirSync(join(STEPWISE_DIR, 'reliability'), { recursive: true });
  appendFileSync(FIGURES_FILE, `${JSON.stringify({ guarantee, figure })}\n`);
}
