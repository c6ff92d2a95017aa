/**
 * What the compiler shares with the modules that lay out the construct steps (map, parallel, wait,
 * workflow, event): the kit, the shape of a step's states, and the states that end a chain inside
 * items or a branch.
 */
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import type { Scope } from '../../../definitions/workflow/constructs/scopes.ts';
import type { StepDefinition, WorkflowDefinition } from '../../../definitions/workflow/schema.ts';

/** The Choice state that routes a step's result. */
export const routeStateName = (step: string): string => `${step}.route`;

/** What the compiler shares with the construct modules. */
export interface CompileKit {
  workflow: WorkflowDefinition;
  /** Whether the state has `$.counters` (the manifest declares counters). */
  counters: boolean;
  /** Every scope of the workflow (the top, items, branches). */
  scopes: readonly Scope[];
  /** The Task named as the step that invokes its own function (a deciding step, or a join), with `extra` in its payload. */
  stepTask(scope: Construct, step: StepDefinition, extra?: Record<string, unknown>): tasks.LambdaInvoke;
  /** The state machine of a workflow of the project, for a workflow step. */
  childStateMachine(workflow: string): sfn.IStateMachine;
  /** The function an event step's wait Task invokes to record its token (src/cdk/constructs/event-waits.ts). */
  eventRegister?(): lambda.IFunction;
}

/** The states of one step. */
export interface StepStates {
  /** Where a route into the step goes. */
  entry: sfn.IChainable;
  /** The state that leaves the step's result at `$.result`; its next is the step's route Choice. */
  last: sfn.State & sfn.INextable;
  /** The states whose errors take the step's failure route. */
  catchable: (sfn.TaskStateBase | sfn.Map | sfn.Parallel)[];
  /** Passes that put an error at `$.error` and go on to the step's failure route (the compiler sets their next). */
  failing?: sfn.Pass[];
  /** Where its failures go when not to the scope's usual place: the state its `onFailure` names. */
  onFailure?: string;
  /** Named errors of some states caught to a step before any other error (an event step's timeout). */
  routed?: { states: sfn.TaskStateBase[]; errors: string[]; to: string }[];
}

/** How a chain inside items or a branch ends: each a state that ends the iteration or branch. */
export interface ChainEnds {
  /** A step routed to `DONE`: the item's or branch's result. */
  done: sfn.IChainable;
  /** An error caught at `$.error`. */
  failed: sfn.IChainable;
  /** The circuit breaker tripped. */
  maxSteps: sfn.IChainable;
  /** A step chose a route it does not declare. */
  routeRejected: sfn.IChainable;
}

/**
 * The first state of an item or branch: the execution input, no error, and a result that routes to the chain's entry
 * (a CustomState: a Pass's `parameters` would drop the nulls the step payload reads).
 */
export function chainStart(
  scope: Construct,
  id: string,
  props: { comment: string; counters: boolean; extra?: Record<string, unknown>; result: Record<string, unknown> },
): sfn.CustomState {
  return new sfn.CustomState(scope, id, {
    stateJson: {
      Type: 'Pass',
      Comment: props.comment,
      Parameters: {
        'input.$': '$.input',
        error: null,
        ...(props.counters && { 'counters.$': '$.counters' }),
        ...props.extra,
        result: { step: null, decidedBy: null, fields: {}, ...props.result },
      },
    },
  });
}

/** A Pass that puts `{ Error, Cause }` at `$.error`. */
export function errorPass(scope: Construct, id: string, error: string, cause: string): sfn.Pass {
  return new sfn.Pass(scope, id, {
    comment: `${error}: ${cause}`,
    result: sfn.Result.fromObject({ Error: error, Cause: cause }),
    resultPath: '$.error',
  });
}

/** The ends of a chain: `done` and `failed` build the item's or branch's record, from `key` (`index` or `branch`). */
export function chainEnds(scope: Construct, prefix: string, key: Record<string, unknown>, maxSteps: number): ChainEnds {
  const record = (ok: boolean) => ({
    ...key,
    ok,
    count: sfn.JsonPath.numberAt('$.result.count'),
    ...(ok
      ? { step: sfn.JsonPath.stringAt('$.result.step'), fields: sfn.JsonPath.objectAt('$.result.fields') }
      : { error: sfn.JsonPath.objectAt('$.error') }),
  });
  const done = new sfn.Pass(scope, `${prefix}.done`, {
    comment: 'Done: the outputs of the step that ended it are its result.',
    parameters: record(true),
  });
  const failed = new sfn.Pass(scope, `${prefix}.failed`, {
    comment: 'Failed: reported with its error, not dropped.',
    parameters: record(false),
  });
  const error = (id: string, name: string, cause: string) =>
    errorPass(scope, `${prefix}.${id}`, name, cause).next(failed);
  return {
    done,
    failed,
    maxSteps: error('max-steps', 'MaxStepsExceeded', `${maxSteps} steps (maxSteps) ran`),
    routeRejected: error('route-rejected', 'RouteRejected', 'a route outside the step edges'),
  };
}
