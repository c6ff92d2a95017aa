/**
 * Compiles a `map` step (src/definitions/workflow/constructs/map.ts) into states:
 *
 * `<step>.items` (Choice: more than `maxItems` elements → `TooManyItems` at `$.error`, the failure
 * route) → `<step>.map` (inline Map over the array, `MaxConcurrency` bounded; each iteration starts
 * at `<step>.item`, a Pass that gives the chain the execution's state with the element in `data`,
 * runs the chain and ends in `<step>.item.done` or `<step>.item.failed`; the results, in item order,
 * go to `$.result.fields.<output>`) → `<step>` (the step's own Lambda joins them: tolerance,
 * failures reported, steps counted).
 */
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { itemStartStateName, itemsCheckStateName, mapStateName } from '../../../definitions/workflow/constructs/map.ts';
import type { Scope } from '../../../definitions/workflow/constructs/scopes.ts';
import { aslPath } from '../../../definitions/workflow/constructs/wait.ts';
import type { StepDefinition } from '../../../definitions/workflow/schema.ts';
import { type ChainEnds, type CompileKit, chainEnds, chainStart, errorPass, type StepStates } from './kit.ts';

/** The state an iteration starts from: the execution's, with the element and its index in `data`. */
function itemStart(scope: Construct, step: StepDefinition, kit: CompileKit, items: Scope): sfn.CustomState {
  const map = step.map!;
  return chainStart(scope, itemStartStateName(step.name), {
    comment: `One item of ${step.name}: data.${map.as} is the element, data.${map.as}Index its position; the chain starts at ${items.entry}.`,
    counters: kit.counters,
    extra: { item: { 'index.$': '$.own.index' } },
    result: {
      next: items.entry,
      reason: `item of ${step.name}`,
      'count.$': '$.parent.count',
      'data.$': 'States.JsonMerge($.parent.data, $.own.data, false)',
    },
  });
}

/** The states of a map step; `chain` lays out the items' chain. */
export function mapStates(
  scope: Construct,
  step: StepDefinition,
  kit: CompileKit,
  items: Scope,
  chain: (of: Scope, ends: ChainEnds) => sfn.IChainable,
): Omit<StepStates, 'onFailure'> {
  const map = step.map!;
  const { maxSteps } = kit.workflow.manifest;
  const ends = chainEnds(scope, `${step.name}.item`, { index: sfn.JsonPath.numberAt('$.item.index') }, maxSteps);
  const mapState = new sfn.Map(scope, mapStateName(step.name), {
    comment: `Runs ${items.entry}… once per element of ${map.items}, at most ${map.maxConcurrency} at once; the results, in item order, go to $.result.fields.${map.output} for ${step.name} to join.`,
    itemsPath: aslPath(map.items),
    maxConcurrency: map.maxConcurrency,
    itemSelector: {
      input: sfn.JsonPath.objectAt('$.input'),
      parent: sfn.JsonPath.objectAt('$.result'),
      own: {
        index: sfn.JsonPath.numberAt('$$.Map.Item.Index'),
        data: {
          [map.as]: sfn.JsonPath.objectAt('$$.Map.Item.Value'),
          [`${map.as}Index`]: sfn.JsonPath.numberAt('$$.Map.Item.Index'),
        },
      },
      ...(kit.counters && { counters: sfn.JsonPath.objectAt('$.counters') }),
    },
    resultSelector: { [map.output]: sfn.JsonPath.objectAt('$') },
    resultPath: '$.result.fields',
  }).itemProcessor(itemStart(scope, step, kit, items).next(chain(items, ends)));
  const join = kit.stepTask(scope, step);
  mapState.next(join);
  const tooMany = errorPass(
    scope,
    `${step.name}.too-many`,
    'TooManyItems',
    `${step.name}: more than ${map.maxItems} items (maxItems)`,
  );
  const check = new sfn.Choice(scope, itemsCheckStateName(step.name), {
    comment: `At most ${map.maxItems} items (maxItems): a longer ${map.items} fails the step.`,
  })
    .when(sfn.Condition.isPresent(`${aslPath(map.items)}[${map.maxItems}]`), tooMany)
    .otherwise(mapState);
  return { entry: check, last: join, catchable: [mapState, join], failing: [tooMany] };
}
