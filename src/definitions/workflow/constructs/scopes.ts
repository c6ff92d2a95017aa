/**
 * Where each step runs: at the top of the workflow, or inside the items of a `map` step or a branch
 * of a `parallel` step. A scope is the steps reachable from its entry through declared edges; its
 * `DONE` ends the item or branch, not the workflow. Every step belongs to exactly one scope, so a
 * chain never routes out of its items or branch, and the compiler lays each scope out once.
 */
import { DefinitionError } from '../../../core/errors.ts';
import { DONE, type StepDefinition, type WorkflowDefinition } from '../schema.ts';

/** The kinds that are constructs, not a Lambda that decides a route. */
export const CONSTRUCT_KINDS = ['map', 'parallel', 'workflow', 'wait', 'event'] as const;
export type ConstructKind = (typeof CONSTRUCT_KINDS)[number];

export const isConstruct = (step: Pick<StepDefinition, 'kind'>): boolean =>
  (CONSTRUCT_KINDS as readonly string[]).includes(step.kind);

/** Kinds whose own Lambda joins what ran inside them (the items' or branches' results). */
export const isJoin = (step: Pick<StepDefinition, 'kind'>): boolean => step.kind === 'map' || step.kind === 'parallel';

/** A chain of steps: the top of the workflow, one map step's items, or one branch of a parallel step. */
export interface Scope {
  /** The map or parallel step the scope runs inside; none at the top. */
  owner?: StepDefinition;
  /** The branch name (parallel) or `items` (map). */
  name: string;
  entry: string;
  /** The scope's steps, in file order. */
  steps: StepDefinition[];
}

/** The scopes a map or parallel step opens: its items, or one per branch. */
export function innerEntries(step: StepDefinition): { name: string; entry: string }[] {
  if (step.kind === 'map' && step.map) return [{ name: 'items', entry: step.map.entry }];
  if (step.kind === 'parallel' && step.parallel)
    return Object.entries(step.parallel.branches).map(([name, entry]) => ({ name, entry }));
  return [];
}

/** Routes a construct step takes besides its edges: where its failure (or an event step's timeout) goes. */
export function failureEdges(step: StepDefinition): string[] {
  const to = step.map?.onFailure ?? step.parallel?.onFailure ?? step.event?.onTimeout;
  return to === undefined ? [] : [to];
}

/** What a scope's `where` says in an error: `the items of 10-classify`, `branch crm of 20-look-up`. */
export const scopeLabel = (scope: Scope): string =>
  !scope.owner
    ? 'the top of the workflow'
    : scope.owner.kind === 'map'
      ? `the items of ${scope.owner.name}`
      : `branch ${scope.name} of ${scope.owner.name}`;

/** The steps reachable from `starts` through edges, pause time-outs and failure routes, not into inner scopes. */
function reach(starts: string[], byName: ReadonlyMap<string, StepDefinition>): Set<string> {
  const seen = new Set(starts.filter((s) => byName.has(s)));
  const queue = [...seen];
  while (queue.length) {
    const step = byName.get(queue.pop()!)!;
    for (const n of [...step.next, ...(step.pause ? [step.pause.onTimeout] : []), ...failureEdges(step)]) {
      if (n !== DONE && byName.has(n) && !seen.has(n)) {
        seen.add(n);
        queue.push(n);
      }
    }
  }
  return seen;
}

/**
 * Every scope of the workflow, the top first, and the scope of each step.
 * @throws DefinitionError when a step is in two scopes (a chain routes out of its items or branch).
 */
export function workflowScopes(def: WorkflowDefinition): { scopes: Scope[]; scopeOf: Map<string, Scope> } {
  const byName = new Map(def.steps.map((s) => [s.name, s]));
  const scopeOf = new Map<string, Scope>();
  const scopes: Scope[] = [];
  const open = (starts: string[], scope: Omit<Scope, 'steps'>) => {
    const members = reach(starts, byName);
    const made: Scope = { ...scope, steps: def.steps.filter((s) => members.has(s.name)) };
    for (const step of made.steps) {
      const other = scopeOf.get(step.name);
      if (other)
        throw new DefinitionError(
          step.file,
          'next',
          `"${step.name}" runs in ${scopeLabel(other)} and in ${scopeLabel(made)}: a chain stays inside its items or branch`,
        );
      scopeOf.set(step.name, made);
    }
    scopes.push(made);
    for (const step of made.steps)
      for (const inner of innerEntries(step))
        open([inner.entry], { owner: step, name: inner.name, entry: inner.entry });
  };
  open([def.manifest.entry, def.manifest.fallback], { name: 'top', entry: def.manifest.entry });
  return { scopes, scopeOf };
}

/**
 * A step inside items or a branch keeps to what an iteration can do: no checkpoint (a person
 * resumes one execution, not one item), no counter, no consensus sampling; a failure route stays
 * in the scope of its step.
 * @throws DefinitionError naming the field.
 */
export function checkScopes(def: WorkflowDefinition): Map<string, Scope> {
  const { scopeOf } = workflowScopes(def);
  const counted = new Set(Object.values(def.manifest.counters).flatMap((c) => [...c.increment, ...c.reset]));
  for (const step of def.steps) {
    const scope = scopeOf.get(step.name);
    if (!scope) continue;
    for (const to of failureEdges(step))
      if (scopeOf.get(to) !== scope)
        throw new DefinitionError(step.file, `${step.kind}.onFailure`, `"${to}" is not in ${scopeLabel(scope)}`);
    if (!scope.owner) continue;
    const inside = `not inside ${scopeLabel(scope)}`;
    if (step.pause) throw new DefinitionError(step.file, 'pause', `a checkpoint pauses the whole execution: ${inside}`);
    if (step.consensus) throw new DefinitionError(step.file, 'consensus', `consensus sampling is ${inside}`);
    if (counted.has(step.name)) throw new DefinitionError(step.file, 'name', `a counter step is ${inside}`);
  }
  return scopeOf;
}
