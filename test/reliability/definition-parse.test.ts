/**
 * Definition files parse in time linear in their size: a statechart of 20,000 states is read with
 * one pass for duplicate keys (the YAML library's own check compares every key with every other),
 * and a duplicate among them is still one line naming the key and both lines. The time is a figure
 * of the report, never asserted.
 */
import { describe, expect, it } from 'vitest';
import { parseDefinitionYaml } from '../../src/definitions/definition-file.ts';
import { recordFigure } from './figures.ts';

const KEYS = 20_000;

/** `states:` with `count` states, each going to the next: one line per state. */
function statechart(count: number, duplicateAt?: number): string {
  const states = Array.from({ length: count }, (_, i) => {
    const name = i === duplicateAt ? `s${i - 1}` : `s${i}`;
    return `  ${name}: { on: { next: s${(i + 1) % count} } }`;
  });
  return `name: big\nstates:\n${states.join('\n')}\n`;
}

describe('definition parse', () => {
  it(`reads a map of ${KEYS} keys, each once`, () => {
    const text = statechart(KEYS);
    const started = performance.now();
    const value = parseDefinitionYaml(text, 'big.yaml') as { states: Record<string, unknown> };
    const seconds = (performance.now() - started) / 1000;
    recordFigure('definition parse', `${KEYS} keys in ${seconds.toFixed(2)} s`);
    expect(Object.keys(value.states)).toHaveLength(KEYS);
    expect(value.states[`s${KEYS - 1}`]).toEqual({ on: { next: 's0' } });
  });

  it('names the duplicate key among them and both its lines', () => {
    // Line 1 is `name:`, line 2 `states:`, state i on line i + 3.
    expect(() => parseDefinitionYaml(statechart(KEYS, KEYS - 1), 'dup.yaml')).toThrow(
      `dup.yaml: (yaml): line ${KEYS + 2}, column 3: duplicate key "s${KEYS - 2}" (first at line ${KEYS + 1})`,
    );
  });
});
