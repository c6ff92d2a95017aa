/**
 * Compiles a `parallel` step (src/definitions/workflow/constructs/parallel.ts) into states:
 *
 * `<step>.branches` (Parallel: one branch per declared chain, each starting at `<step>.<branch>`, a
 * Pass that gives the chain the execution's state, and ending in `<step>.<branch>.done` or
 * `.failed`; the results go to `$.result.fields`, keyed by branch) → `<step>` (the step's own Lambda
 * joins them: a failed branch fails the step, named; the others' outputs land under their names).
 */
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { branchStartStateName, parallelStateName } from '../../../definitions/workflow/constructs/parallel.ts';
import type { Scope } from '../../../definitions/workflow/constructs/scopes.ts';
import type { StepDefinition } from '../../../definitions/workflow/schema.ts';
import { type ChainEnds, type CompileKit, chainEnds, chainStart, type StepStates } from './kit.ts';

/** The state a branch starts from: the execution's, its chain's entry next. */
function branchStart(scope: Construct, step: StepDefinition, kit: CompileKit, branch: Scope): sfn.CustomState {
  return chainStart(scope, branchStartStateName(step.name, branch.name), {
    comment: `Branch ${branch.name} of ${step.name}: starts at ${branch.entry} with the execution's data.`,
    counters: kit.counters,
    result: {
      next: branch.entry,
      reason: `branch ${branch.name} of ${step.name}`,
      'count.$': '$.result.count',
      'data.$': '$.result.data',
    },
  });
}

/** The states of a parallel step; `chain` lays out each branch's chain. */
export function parallelStates(
  scope: Construct,
  step: StepDefinition,
  kit: CompileKit,
  branchOf: (name: string) => Scope,
  chain: (of: Scope, ends: ChainEnds) => sfn.IChainable,
): Omit<StepStates, 'onFailure'> {
  const names = Object.keys(step.parallel!.branches);
  const { maxSteps } = kit.workflow.manifest;
  const parallel = new sfn.Parallel(scope, parallelStateName(step.name), {
    comment: `Runs ${names.join(', ')} at once; their results go to $.result.fields by branch for ${step.name} to join.`,
    resultSelector: Object.fromEntries(names.map((name, i) => [name, sfn.JsonPath.objectAt(`$[${i}]`)])),
    resultPath: '$.result.fields',
  });
  for (const name of names) {
    const branch = branchOf(name);
    const ends = chainEnds(scope, `${step.name}.${name}`, { branch: name }, maxSteps);
    parallel.branch(branchStart(scope, step, kit, branch).next(chain(branch, ends)));
  }
  const join = kit.stepTask(scope, step);
  parallel.next(join);
  return { entry: parallel, last: join, catchable: [parallel, join] };
}
