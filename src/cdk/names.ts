/**
 * The names the constructs give and the local runtime looks up: stacks, state machines, buses,
 * fixed states and the engine modules of functions. A module of its own, without the CDK, so a
 * local command (`run`, `replay`, `lifecycle … replay`) never loads aws-cdk-lib to find them.
 */
import { createHash } from 'node:crypto';
import { UNKNOWN_EVENT } from '../definitions/lifecycle/routes.ts';

/** `order-check` → `OrderCheck`: stack names and table logical ids. */
export const pascalCase = (name: string): string =>
  name
    .split(/[-_]/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

/** `Stepwise-<Workflow>-<env>`: the stack of one workflow in one environment. */
export const workflowStackName = (workflow: string, env: string): string => `Stepwise-${pascalCase(workflow)}-${env}`;
/** `Stepwise-<Lifecycle>-<env>`: the stack of one lifecycle in one environment (`Stepwise-OrderLifecycle-dev`). */
export const lifecycleStackName = workflowStackName;
/** The custom bus the lifecycle's producers put events on, and its state changes are published to. */
export const lifecycleBusName = (lifecycle: string, env: string): string => `stepwise-${env}-${lifecycle}`;

/** Step Functions' limit on a state machine name. */
export const STATE_MACHINE_NAME_MAX = 80;

/**
 * The `StateMachineName` of a workflow's state machine: `<stack>-<workflow>`, so the console lists
 * `Stepwise-SupportDesk-dev-support-desk` instead of `WorkflowStateMachine8F1B1C15-<random>`. A name
 * past the 80-character limit keeps its first 71 characters and a digest of the whole, so two long
 * names never collide.
 */
export function workflowStateMachineName(stackName: string, workflow: string): string {
  const name = `${stackName}-${workflow}`;
  if (name.length <= STATE_MACHINE_NAME_MAX) return name;
  const digest = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, STATE_MACHINE_NAME_MAX - digest.length - 1)}-${digest}`;
}

/** The Pass state that plans a consensus step's samples. */
export const consensusPlanStateName = (step: string): string => `${step}.consensus`;

/**
 * Names of the lifecycle state machine's fixed states; the transition Tasks are named by event type (`routeOf`,
 * src/definitions/lifecycle/routes.ts).
 */
export const LIFECYCLE_STATES = {
  route: 'Route event',
  unknown: UNKNOWN_EVENT,
  persist: 'Persist',
  retryConflict: 'Retry after conflict',
  afterPersist: 'After persist',
  done: 'Done',
  duplicate: 'Duplicate',
  deadLetter: 'Dead letter',
  failed: 'Event not applied',
} as const;

/** The one Lambda entry every step runs; it dispatches on the `WORKFLOW` and `STEP` environment variables. */
export const STEP_ENTRY = 'runtime/step-handler/handler.ts';
/** The email ingress function's handler module (the local session finds the ingress's configuration by it). */
export const EMAIL_INGRESS_ENTRY = 'runtime/triggers/email/handler.ts';
/** The engine modules of the two event-wait functions. */
export const EVENT_REGISTER_ENTRY = 'runtime/triggers/event-wait/register-handler.ts';
export const EVENT_RESUMER_ENTRY = 'runtime/triggers/event-wait/handler.ts';
