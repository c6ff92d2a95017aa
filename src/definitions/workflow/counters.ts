/**
 * Manifest counters (`counters:` in `workflow.yaml`): a number per counter in the execution state
 * (`$.counters.<name>`), reset and incremented when declared steps are entered, and capped by a
 * generated Choice that ends the execution in a named outcome. This module is the pure part: the
 * checks against the graph and what entering a step does to each counter. The compiler
 * (`src/cdk/constructs/compile/counters.ts`) turns it into states.
 */
import { join } from 'node:path';
import { DefinitionError } from '../../core/errors.ts';
import { relPath } from '../definition-file.ts';
import type { Counter, Manifest, WorkflowDefinition } from './schema.ts';

/** State names the compiler uses for its own terminal states; an outcome must not take one. */
const RESERVED_OUTCOMES = new Set(['Done', 'MaxStepsExceeded', 'FallbackFailed', 'RouteRejected', 'Start']);

/** What entering a step does to one counter. */
export interface CounterChange {
  name: string;
  counter: Counter;
  /** Set to 0 first. */
  reset: boolean;
  /** Then add 1, after the cap check. */
  increment: boolean;
}

/** The counters a step changes when it is entered, in manifest order (empty for most steps). */
export function counterChanges(manifest: Pick<Manifest, 'counters'>, step: string): CounterChange[] {
  return Object.entries(manifest.counters).flatMap(([name, counter]) => {
    const reset = counter.reset.includes(step);
    const increment = counter.increment.includes(step);
    return reset || increment ? [{ name, counter, reset, increment }] : [];
  });
}

/** The counters at the start of an execution: all 0. */
export const initialCounters = (manifest: Pick<Manifest, 'counters'>): Record<string, number> =>
  Object.fromEntries(Object.keys(manifest.counters).map((name) => [name, 0]));

/**
 * Counters name steps of the workflow, and outcomes are distinct state names.
 * @throws DefinitionError naming `counters.<name>.<field>` of the manifest.
 */
export function validateCounters(def: WorkflowDefinition): void {
  const file = relPath(join(def.dir, 'workflow.yaml'));
  const steps = new Set(def.steps.map((s) => s.name));
  const outcomes = new Map<string, string>();
  for (const [name, counter] of Object.entries(def.manifest.counters)) {
    for (const field of ['increment', 'reset'] as const)
      counter[field].forEach((step, i) => {
        if (!steps.has(step))
          throw new DefinitionError(file, `counters.${name}.${field}.${i}`, `unknown step "${step}"`);
      });
    if (counter.then !== undefined && !steps.has(counter.then))
      throw new DefinitionError(file, `counters.${name}.then`, `unknown step "${counter.then}"`);
    if (RESERVED_OUTCOMES.has(counter.outcome))
      throw new DefinitionError(
        file,
        `counters.${name}.outcome`,
        `"${counter.outcome}" is a state the compiler generates`,
      );
    const twin = outcomes.get(counter.outcome);
    if (twin)
      throw new DefinitionError(
        file,
        `counters.${name}.outcome`,
        `"${counter.outcome}" is also the outcome of counter ${twin}`,
      );
    outcomes.set(counter.outcome, name);
  }
}
