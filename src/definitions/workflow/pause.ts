/**
 * The contract of a step's `pause` (a checkpoint between steps), shared by the compiler
 * (src/cdk/constructs/pause.ts), the local runtime (src/local/records/pauses.ts) and the CLI: the state
 * names, the event that publishes the task token, and where the resumer's output lands.
 */

import type { StepDefinition } from './schema.ts';
import { DONE } from './schema.ts';

/** The Choice that decides whether the step's route pauses. */
export const checkpointStateName = (step: string): string => `${step}.checkpoint`;
/** The `.waitForTaskToken` Task that waits for the resumer. */
export const pauseStateName = (step: string): string => `${step}.pause`;

/** `source` of the EventBridge event a checkpoint publishes. */
export const PAUSE_EVENT_SOURCE = 'stepwise.checkpoints';
/** `detail-type` of that event. */
export const PAUSE_EVENT_DETAIL_TYPE = 'Stepwise Checkpoint Requested';

/**
 * The key of `$.result.data` the resumer's output (`SendTaskSuccess --task-output`) is stored
 * under, so the next step reads it as `data.checkpoint`. A step output of this name is refused.
 */
export const CHECKPOINT_DATA_KEY = 'checkpoint';

/** The edges a paused step waits before: `pause.edges`, else every declared edge but `DONE`. */
export function pausedEdges(step: StepDefinition): string[] {
  if (!step.pause) return [];
  return step.pause.edges ?? step.next.filter((n) => n !== DONE);
}

/**
 * The `detail` of the checkpoint event (and of a local pause): who resumes reads the step's
 * result and the required actions, then calls `SendTaskSuccess` with `taskToken`.
 */
export interface CheckpointRequest {
  taskToken: string;
  workflow: string;
  execution: string;
  step: string;
  /** Where the execution goes once resumed. */
  next: string;
  reason: string;
  /** The step's outputs; `fields[actionsField]` lists the required actions when the pause names one. */
  fields: Record<string, unknown>;
  actionsField?: string;
  instructions?: string;
  timeoutSeconds: number;
  heartbeatSeconds?: number;
}

/** What the resumer must do: the named output of the step, else the fixed instructions. */
export function requiredActions(request: Partial<CheckpointRequest>): unknown {
  const fromStep = request.actionsField ? request.fields?.[request.actionsField] : undefined;
  return fromStep ?? request.instructions ?? null;
}
