/**
 * Compiles the manifest's `counters` (src/definitions/workflow/counters.ts) into states. Entering a
 * step that changes a counter goes through, in order: a Choice `<step>.<counter>` per counter it
 * increments (at the cap → the counter's outcome, a Succeed state of that name), then one Pass
 * `<step>.counters` that writes every counter's new value to `$.counters`, then the step.
 */
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { counterChanges, initialCounters } from '../../../definitions/workflow/counters.ts';
import type { Manifest } from '../../../definitions/workflow/schema.ts';

/** The Choice that checks `counter` before `step` is entered. */
export const counterCheckStateName = (step: string, counter: string): string => `${step}.${counter}`;
/** The Pass that writes the counters `step` changes. */
export const counterUpdateStateName = (step: string): string => `${step}.counters`;

/** What the Start state puts at `$.counters` (undefined without counters: the ASL stays as it was). */
export function startCounters(manifest: Pick<Manifest, 'counters'>): Record<string, number> | undefined {
  return Object.keys(manifest.counters).length ? initialCounters(manifest) : undefined;
}

/**
 * The counter states of one workflow, created once per step on first use.
 *
 * @example
 * const gates = new CounterGates(scope, manifest);
 * route.when(sfn.Condition.stringEquals('$.result.next', '02-select-tool'), gates.gate('02-select-tool', task));
 */
export class CounterGates {
  /** The outcome states, by outcome name: a Succeed, or (counter `then`) a Pass into the answering step. */
  readonly outcomes: ReadonlyMap<string, sfn.IChainable>;
  private readonly gates = new Map<string, sfn.IChainable>();

  /** @param step the first state of a step (a counter's `then`). */
  constructor(
    private readonly scope: Construct,
    private readonly manifest: Pick<Manifest, 'counters'>,
    step: (name: string) => sfn.IChainable = () => {
      throw new Error('no step states given');
    },
  ) {
    this.outcomes = new Map<string, sfn.IChainable>(
      Object.entries(manifest.counters).map(([name, c]): [string, sfn.IChainable] => {
        const cause = `counter ${name} reached its cap of ${c.max}`;
        if (!c.then)
          return [
            c.outcome,
            new sfn.Succeed(scope, c.outcome, {
              comment: `Counter ${name} reached its cap of ${c.max}: the state (result.data) holds the partial work.`,
            }),
          ];
        const pass = new sfn.Pass(scope, c.outcome, {
          comment: `${cause}: ${c.then} answers with the partial work`,
          result: sfn.Result.fromObject({ Error: c.outcome, Cause: cause }),
          resultPath: '$.error',
        });
        return [c.outcome, pass.next(step(c.then))];
      }),
    );
  }

  /** Where a transition into `step` goes: its counter states, then `target` (the step's first state); `target` itself when it changes no counter. */
  gate(step: string, target: sfn.IChainable): sfn.IChainable {
    const changes = counterChanges(this.manifest, step);
    if (!changes.length) return target;
    const known = this.gates.get(step);
    if (known) return known;
    const values = Object.fromEntries(
      Object.keys(this.manifest.counters).map((name) => {
        const change = changes.find((c) => c.name === name);
        const current = sfn.JsonPath.numberAt(`$.counters.${name}`);
        if (!change) return [name, current];
        if (change.reset) return [name, change.increment ? 1 : 0];
        return [name, sfn.JsonPath.mathAdd(current, 1)];
      }),
    );
    const what = changes
      .map((c) => `${c.name} ${c.reset ? (c.increment ? 'reset to 1' : 'reset to 0') : '+1'}`)
      .join(', ');
    const update = new sfn.Pass(this.scope, counterUpdateStateName(step), {
      comment: `Entering ${step}: ${what} ($.counters).`,
      parameters: values,
      resultPath: '$.counters',
    });
    update.next(target);
    // A reset in the same step means the increment starts from 0: never at the cap.
    const checks = changes.filter((c) => c.increment && !c.reset);
    let head: sfn.IChainable = update;
    for (const { name, counter } of checks.reverse()) {
      head = new sfn.Choice(this.scope, counterCheckStateName(step, name), {
        comment: `Counter ${name} before ${step}: at its cap of ${counter.max} → ${counter.outcome}; otherwise on to ${step}.`,
      })
        .when(
          sfn.Condition.numberGreaterThanEquals(`$.counters.${name}`, counter.max),
          this.outcomes.get(counter.outcome)!,
        )
        .otherwise(head);
    }
    this.gates.set(step, head);
    return head;
  }
}
