/**
 * A `parallel` step: two or more chains at once, compiled to a Parallel state
 * (src/cdk/constructs/compile/parallel.ts). This module is the pure part: the state names and the
 * join that the step's own Lambda runs on the branches' results.
 */
import * as z from 'zod';
import { BranchFailedError } from '../../../core/errors.ts';
import type { StepDefinition } from '../schema.ts';
import { ChainResult, causeMessage, type JoinResult } from './map.ts';

/** The Parallel state. */
export const parallelStateName = (step: string): string => `${step}.branches`;
/** The first state of a branch: its state, from the step's. */
export const branchStartStateName = (step: string, branch: string): string => `${step}.${branch}`;

const BranchResult = ChainResult.extend({ branch: z.string() });

/**
 * Join the branches: each branch's result (the outputs of the step that ended it) under its name.
 * @throws BranchFailedError naming the first failed branch, with its error.
 */
export function joinBranches(step: StepDefinition, raw: unknown, previousCount: number): JoinResult {
  const names = Object.keys(step.parallel!.branches);
  const results = z.record(z.string(), BranchResult).parse(raw ?? {});
  const fields: Record<string, unknown> = {};
  for (const name of names) {
    const result = results[name];
    if (!result?.ok) {
      const error = result?.error;
      throw new BranchFailedError(
        `${step.name}: branch ${name} failed: ${error ? `${error.Error}: ${causeMessage(error.Cause)}` : 'no result'}`,
      );
    }
    fields[name] = result.fields ?? {};
  }
  const longest = Math.max(previousCount, ...names.map((n) => results[n]!.count));
  return {
    next: step.next[0]!,
    reason: `${names.length} branches joined`,
    decidedBy: 'code',
    fields,
    innerSteps: longest - previousCount,
  };
}
