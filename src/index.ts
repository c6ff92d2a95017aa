/**
 * `stepwise`: what a workflow's own code imports. Tools (`defineTool`), code steps and fast paths
 * (`defineCodeStep`, `defineFastPath`), the contexts and records they see, the typed errors the
 * ASL's Retry/Catch match by name, and reading the workflow's own definition files. Helpers that some
 * steps and tools use have entries of their own: `stepwise/embeddings`, `stepwise/templates`,
 * `stepwise/dynamodb`.
 *
 * @example
 * import * as z from 'zod';
 * import { defineTool } from 'stepwise';
 *
 * export default defineTool({
 *   name: 'lookup_customer',
 *   description: 'Find a customer by id.',
 *   input: z.strictObject({ customerId: z.string() }),
 *   run: async ({ customerId }) => ({ customerId, found: false }),
 * });
 */

export type { Env } from './core/env.ts';
// Typed errors: Lambda reports the class name as `errorType`, which Retry/Catch `ErrorEquals` match.
export {
  causeMessage,
  DefinitionError,
  InvalidInputError,
  InvalidModelOutputError,
  ModelThrottledError,
  ModelTimeoutError,
  StepFailedError,
  StepwiseError,
  ToolInputError,
  ToolNotAllowedError,
  ToolUnavailableError,
} from './core/errors.ts';
// A code step's own CEL rules.
export { type CompiledExpression, compileExpression, ExpressionError } from './core/expressions.ts';
// A workflow's own definition files (agent settings, data beside its steps), in the project or shipped with a Lambda.
export { statemachinesDir } from './core/paths.ts';
export { checkDefinition, readDefinitionYaml, relPath } from './definitions/definition-file.ts';
export { EmailInputSchema } from './definitions/workflow/input.ts';
export { loadWorkflow } from './definitions/workflow/loader.ts';
export { CHECKPOINT_DATA_KEY } from './definitions/workflow/pause.ts';
export type { StepDefinition, WorkflowDefinition } from './definitions/workflow/schema.ts';
export { DONE } from './definitions/workflow/schema.ts';
// What crosses between steps.
export type {
  DecidedBy,
  GuardVerdict,
  StepInput,
  StepOutput,
  TokenUsage,
  ToolCallRecord,
} from './runtime/contracts/step.ts';
export {
  defineFastPath,
  type FastPath,
  type FastPathContext,
  type FastPathDecision,
} from './runtime/steps/fast-path.ts';
export { type ResponseFacts, responseFacts } from './runtime/steps/response-facts.ts';
// Code steps and fast paths.
export {
  type CodeStep,
  defineCodeStep,
  isReplay,
  NO_USAGE,
  type StepContext,
  type StepResult,
  sentReply,
} from './runtime/steps/types.ts';
export { requireEnv } from './runtime/tools/toolbox.ts';
// Tools.
export {
  type AwsClients,
  type CallContext,
  defineTool,
  type TableAccess,
  type Toolbox,
  type ToolContext,
  type ToolDefinition,
  type ToolResources,
} from './runtime/tools/types.ts';
export { askCustomer, sendEmail } from './runtime/triggers/email/send-email.ts';
