/**
 * What the constructs write into the template for the local runtime to read back: CloudFormation
 * Metadata keys and the Lambda folder layout. A module of its own, without the CDK, so the local
 * runtime can read a (cached) template without loading it.
 */

/**
 * Metadata key on every `AWS::Lambda::Function`: the engine handler module it runs
 * (`src/runtime/step-handler/handler.ts`). The local runtime imports it.
 */
export const ENTRY_METADATA = 'stepwise:entry';
/**
 * Metadata key on a function shipped with a workflow folder: the folder, relative to the project root (the bundle bench
 * rebuilds it).
 */
export const WORKFLOW_DIR_METADATA = 'stepwise:workflowDir';
/** Metadata key on a state machine: the workflow (or lifecycle) it runs. */
export const WORKFLOW_METADATA = 'stepwise:workflow';
/** Where a bundled workflow folder lands inside the Lambda (`/var/task` is the code root). */
export const LAMBDA_STATEMACHINES_DIR = '/var/task/statemachines';
