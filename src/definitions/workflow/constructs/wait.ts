/**
 * A `wait` step: a Wait state for a fixed time or until a timestamp of the state
 * (src/cdk/constructs/compile/wait.ts). Locally the wait takes no time: the local runtime moves its
 * clock past it (src/local/asl/waits.ts).
 */

/** The Choice that checks an `until` timestamp before waiting on it. */
export const waitCheckStateName = (step: string): string => `${step}.check`;
/** The Wait state. */
export const waitStateName = (step: string): string => `${step}.wait`;

/** The ASL reference path of a state path (`data.remindAt` → `$.result.data.remindAt`). */
export const aslPath = (statePath: string): string =>
  statePath.startsWith('data.') ? `$.result.${statePath}` : `$.${statePath}`;
