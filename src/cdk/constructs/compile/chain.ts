/**
 * The states of one step of any kind, and of a chain of steps inside the items of a map step or a
 * branch of a parallel step. A step is laid out as its `entry` (where routes into it go), its
 * `last` state (which leaves the step's result at `$.result` and goes on to its route Choice) and
 * the states whose errors take its failure route. Inside items and branches the route Choice keeps
 * the circuit breaker and the declared edges; `DONE`, a caught error, the breaker and an undeclared
 * route end the item or branch with its result (`ok`) or its error, never the execution.
 */
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import type { Scope } from '../../../definitions/workflow/constructs/scopes.ts';
import { DONE, type StepDefinition } from '../../../definitions/workflow/schema.ts';
import { eventStates } from './event.ts';
import { type ChainEnds, type CompileKit, routeStateName, type StepStates } from './kit.ts';
import { mapStates } from './map.ts';
import { parallelStates } from './parallel.ts';
import { waitStates } from './wait.ts';
import { workflowStepStates } from './workflow-step.ts';

/** The states of a step of any kind; `chain` lays out the scopes a map or parallel step opens. */
export function stepStates(
  scope: Construct,
  step: StepDefinition,
  kit: CompileKit,
  payload: Record<string, unknown> = {},
): StepStates {
  const onFailure = step.map?.onFailure ?? step.parallel?.onFailure;
  const inner = (name: string) => kit.scopes.find((s) => s.owner === step && s.name === name)!;
  const chain = (of: Scope, ends: ChainEnds) => chainStates(scope, of, ends, kit);
  if (step.kind === 'map') return { ...mapStates(scope, step, kit, inner('items'), chain), onFailure };
  if (step.kind === 'parallel') return { ...parallelStates(scope, step, kit, inner, chain), onFailure };
  if (step.kind === 'wait') return waitStates(scope, step);
  if (step.kind === 'workflow') return workflowStepStates(scope, step, kit.childStateMachine(step.workflow!.name));
  if (step.kind === 'event') return eventStates(scope, step, kit.workflow, kit.eventRegister!());
  const task = kit.stepTask(scope, step, payload);
  return { entry: task, last: task, catchable: [task] };
}

/** The states of a chain of steps inside items or a branch; returns the chain's entry. */
export function chainStates(scope: Construct, of: Scope, ends: ChainEnds, kit: CompileKit): sfn.IChainable {
  const { maxSteps } = kit.workflow.manifest;
  // A step inside items tells its function which item it runs for: its side effects are idempotent per item.
  const item = of.owner?.kind === 'map' && {
    item: { map: of.owner.name, index: sfn.JsonPath.numberAt('$.item.index') },
  };
  const built = new Map(of.steps.map((step) => [step.name, stepStates(scope, step, kit, item || {})]));
  const breaker = sfn.Condition.and(
    sfn.Condition.numberGreaterThanEquals('$.result.count', maxSteps),
    sfn.Condition.not(sfn.Condition.stringEquals('$.result.next', DONE)),
  );
  for (const step of of.steps) {
    const states = built.get(step.name)!;
    const failTo = states.onFailure ? built.get(states.onFailure)!.entry : ends.failed;
    for (const r of states.routed ?? [])
      for (const s of r.states) s.addCatch(built.get(r.to)!.entry, { errors: r.errors, resultPath: '$.error' });
    for (const s of states.catchable) s.addCatch(failTo, { errors: [sfn.Errors.ALL], resultPath: '$.error' });
    for (const pass of states.failing ?? []) pass.next(failTo);
    const route = new sfn.Choice(scope, routeStateName(step.name), {
      comment: `Routes ${step.name}'s decision inside ${of.owner!.name} (${of.name}): ${step.next.join(', ')}; DONE ends it, at ${maxSteps} steps or on any other route it fails.`,
    }).when(breaker, ends.maxSteps);
    for (const edge of step.next)
      route.when(sfn.Condition.stringEquals('$.result.next', edge), edge === DONE ? ends.done : built.get(edge)!.entry);
    route.otherwise(ends.routeRejected);
    states.last.next(route);
  }
  return built.get(of.entry)!.entry;
}
