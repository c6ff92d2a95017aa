/**
 * An `event` step: the execution waits until an outside event carrying its correlation key
 * arrives, or takes its `onTimeout` step at the deadline. Deployed, a `.waitForTaskToken` Task
 * records the task token under the key (src/cdk/constructs/compile/event.ts) and a resumer
 * completes it (src/runtime/triggers/event-wait/); locally the paused execution is resumed by
 * an event put on the local bus or `stepwise send-event` (src/local/sessions/event-waits.ts).
 */
import { DefinitionError } from '../../../core/errors.ts';
import type { StepDefinition, WorkflowDefinition } from '../schema.ts';
import { type Scope, scopeLabel } from './scopes.ts';

/** The Choice that checks the correlation key is in the state. */
export const eventCheckStateName = (step: string): string => `${step}.key`;
/** The `.waitForTaskToken` Task that records the token and waits. */
export const eventWaitStateName = (step: string): string => `${step}.wait-event`;
/** The error an execution without its correlation key fails the step with. */
export const MISSING_KEY_ERROR = 'MissingCorrelationKey';

/** What the wait Task hands the registering function (and, locally, what the paused Task keeps). */
export interface EventWaitRequest {
  taskToken: string;
  workflow: string;
  step: string;
  execution: string;
  source: string;
  detailType: string;
  match: string;
  key: unknown;
  timeoutSeconds: number;
}

/** The outputs an event step produces: the event's detail under its `output`. */
export const eventOutputs = (step: StepDefinition): string[] => (step.event ? [step.event.output] : []);

/** The field a construct step names its failure route in: `event.onTimeout`, else `<kind>.onFailure`. */
export const failureField = (step: StepDefinition): string =>
  step.kind === 'event' ? 'event.onTimeout' : `${step.kind}.onFailure`;

/**
 * An event step pauses the whole execution, so it stands at the top of the workflow, not inside
 * items or a branch; its timeout route is another step.
 * @throws DefinitionError naming the field.
 */
export function checkEventSteps(def: WorkflowDefinition, scopeOf: ReadonlyMap<string, Scope>): void {
  for (const step of def.steps) {
    if (!step.event) continue;
    const scope = scopeOf.get(step.name);
    if (scope?.owner)
      throw new DefinitionError(
        step.file,
        'kind',
        `an event step pauses the whole execution: not inside ${scopeLabel(scope)}`,
      );
    if (step.event.onTimeout === step.name)
      throw new DefinitionError(step.file, 'event.onTimeout', 'the timeout route cannot be the step itself');
  }
}

/** The value at a dotted path of an object (`order.id`), or undefined. */
export function valueAt(value: unknown, path: string): unknown {
  let at = value;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** The text a correlation key is compared as: a string as is, any other JSON value as JSON. */
export const keyText = (key: unknown): string => (typeof key === 'string' ? key : JSON.stringify(key));

/** A deadline in words: `3d`, `2h`, `90s`. */
export function deadlineText(seconds: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['min', 60],
  ] as const)
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

/** The step's label in a graph: what it waits for, by which key, until when. */
export const eventLabel = (event: NonNullable<StepDefinition['event']>): string =>
  `wait for ${event.detailType} from ${event.source} by ${event.key}, up to ${deadlineText(event.timeoutSeconds)}`;

/** The timeout edge's label in a graph. */
export const eventTimeoutLabel = (event: NonNullable<StepDefinition['event']>): string =>
  `no event within ${deadlineText(event.timeoutSeconds)}`;
