/**
 * A `map` step: a chain of steps once per element of a state array, compiled to an inline Map
 * state (src/cdk/constructs/compile/map.ts). This module is the pure part: the checks, the limits
 * an inline Map must stay under, the state names, and the join that the step's own Lambda runs on
 * the items' results (order, failures, tolerance, steps counted).
 */
import * as z from 'zod';
import { DefinitionError, ItemsFailedError } from '../../../core/errors.ts';
import type { StepDefinition, WorkflowDefinition } from '../schema.ts';
import type { Scope } from './scopes.ts';

/** Step Functions keeps at most this many events in a Standard execution's history. */
export const HISTORY_EVENT_LIMIT = 25_000;
/** The state payload quota (input and output of every state), in bytes. */
export const PAYLOAD_LIMIT_BYTES = 262_144;
/** The smallest result an item can leave in the state: `{ index, ok, step, fields }` with one short output. */
export const MIN_ITEM_RESULT_BYTES = 96;
/** History events of one item around its steps: the iteration's start and end, its first and last Pass. */
const ITEM_EVENTS = 6;
/** History events of one step: its Task (entered, scheduled, started, succeeded, exited) and its route Choice. */
const STEP_EVENTS = 7;

/** The Choice that refuses too many items. */
export const itemsCheckStateName = (step: string): string => `${step}.items`;
/** The inline Map state. */
export const mapStateName = (step: string): string => `${step}.map`;
/** The first state of an item: its state, with the element in `data`. */
export const itemStartStateName = (step: string): string => `${step}.item`;

/** The steps one item may run at most: the chain's length, or `maxSteps` when it loops. */
function longestChain(scope: Scope, maxSteps: number): number {
  const names = new Set(scope.steps.map((s) => s.name));
  const loops = scope.steps.some((s) => s.next.includes(s.name)) || hasCycle(scope.steps, names);
  return loops ? maxSteps : scope.steps.length;
}

function hasCycle(steps: readonly StepDefinition[], names: ReadonlySet<string>): boolean {
  const byName = new Map(steps.map((s) => [s.name, s]));
  const state = new Map<string, 'open' | 'done'>();
  const visit = (name: string): boolean => {
    if (state.get(name) === 'open') return true;
    if (state.get(name) === 'done') return false;
    state.set(name, 'open');
    const found = byName.get(name)!.next.some((n) => names.has(n) && visit(n));
    state.set(name, 'done');
    return found;
  };
  return steps.some((s) => visit(s.name));
}

/** The most items the limits of an inline Map allow for this chain: history events, then payload. */
export function inlineMapItemLimit(scope: Scope, maxSteps: number): number {
  // The rest of the execution runs at most maxSteps steps too.
  const rest = ITEM_EVENTS + maxSteps * STEP_EVENTS;
  const perItem = ITEM_EVENTS + longestChain(scope, maxSteps) * STEP_EVENTS;
  const byHistory = Math.floor((HISTORY_EVENT_LIMIT - rest) / perItem);
  return Math.min(byHistory, Math.floor(PAYLOAD_LIMIT_BYTES / MIN_ITEM_RESULT_BYTES));
}

/**
 * A map step tolerates a count or a percentage, fits the inline Map limits, and its failure route
 * exists.
 * @throws DefinitionError naming `map.<field>` of the step file.
 */
export function validateMap(step: StepDefinition, def: WorkflowDefinition, items: Scope): void {
  const map = step.map!;
  if (map.toleratedFailures !== undefined && map.toleratedFailurePercentage !== undefined)
    throw new DefinitionError(step.file, 'map.toleratedFailures', 'give a count or a percentage, not both');
  const limit = inlineMapItemLimit(items, def.manifest.maxSteps);
  if (map.maxItems > limit)
    throw new DefinitionError(
      step.file,
      'map.maxItems',
      `${map.maxItems} items of this chain would pass an inline Map's limits (25,000 history events, 256 KB of state): at most ${limit}; more needs a Distributed Map`,
    );
}

/** What one chain (a Map item, a Parallel branch) ended with: its last step's outputs, or the error it failed on. */
export const ChainResult = z.object({
  ok: z.boolean(),
  step: z.string().nullable().optional(),
  fields: z.record(z.string(), z.unknown()).optional(),
  error: z
    .object({ Error: z.string(), Cause: z.string().default('') })
    .nullable()
    .optional(),
  count: z.number().int().nonnegative(),
});
const ItemResult = ChainResult.extend({ index: z.number().int().nonnegative() });

/** The message of a caught error: a Lambda error's `Cause` is `{ errorType, errorMessage, trace }` as JSON. */
export function causeMessage(cause: string): string {
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    return typeof parsed.errorMessage === 'string' ? parsed.errorMessage : cause;
  } catch {
    return cause;
  }
}

/** What a join step decides: always its one edge, with the joined outputs and the steps run inside. */
export interface JoinResult {
  next: string;
  reason: string;
  decidedBy: 'code';
  fields: Record<string, unknown>;
  /** Steps of the longest item or branch: the circuit breaker counts them after the join. */
  innerSteps: number;
}

/**
 * Join the items: their results in item order (failed ones reported, with their error), failures
 * checked against the tolerance, and the longest item's steps for the circuit breaker.
 * @throws ItemsFailedError when more items failed than the step tolerates.
 */
export function joinItems(step: StepDefinition, raw: unknown, previousCount: number): JoinResult {
  const map = step.map!;
  const results = z.array(ItemResult).parse(raw ?? []);
  results.sort((a, b) => a.index - b.index);
  const failed = results.filter((r) => !r.ok);
  const pct = map.toleratedFailurePercentage;
  const tooMany =
    pct === undefined ? failed.length > (map.toleratedFailures ?? 0) : failed.length * 100 > pct * results.length;
  if (tooMany)
    throw new ItemsFailedError(
      `${step.name}: ${failed.length} of ${results.length} items failed (tolerated: ${pct === undefined ? (map.toleratedFailures ?? 0) : `${pct}%`}); first: item ${failed[0]!.index}: ${failed[0]!.error?.Error ?? 'unknown'}: ${causeMessage(failed[0]!.error?.Cause ?? '')}`,
    );
  const longest = Math.max(previousCount, ...results.map((r) => r.count));
  return {
    next: step.next[0]!,
    reason: `${results.length} items, ${failed.length} failed`,
    decidedBy: 'code',
    fields: {
      [map.output]: results.map(({ count: _, ...r }) =>
        r.ok ? { index: r.index, ok: true, step: r.step ?? null, fields: r.fields ?? {} } : r,
      ),
    },
    innerSteps: longest - previousCount,
  };
}
