/**
 * `stepwise`: what a workflow's own code imports. Tools (`defineTool`), code steps and fast paths
 * (`defineCodeStep`, `defineFastPath`), the contexts and records they see, the typed errors the
 * ASL's Retry/Catch match by name, and the helpers the example workflows use.
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

// Tools.
export { defineTool, type AwsClients, type CallContext, type TableAccess, type Toolbox, type ToolContext, type ToolDefinition, type ToolResources } from './runtime/tools/types.ts';
export { requireEnv } from './runtime/tools/toolbox.ts';
export { sendEmail } from './runtime/triggers/email/send-email.ts';

// Code steps and fast paths.
export { defineCodeStep, isReplay, NO_USAGE, sentReply, type CodeStep, type StepContext, type StepResult } from './runtime/steps/types.ts';
export { defineFastPath, type FastPath, type FastPathContext, type FastPathDecision } from './runtime/steps/fast-path.ts';
export { lookup, renderTemplate, type RenderOptions } from './core/template.ts';

// The embeddings port (a tool resource): Bedrock's Titan Text Embeddings V2 on AWS, a lexical stand-in offline.
export { contentWords, cosine, embeddingsFromEnv, lexicalEmbeddings, TITAN_V2, type EmbeddingModel } from './runtime/models/embeddings.ts';

// What crosses between steps.
export { type DecidedBy, type GuardVerdict, type StepInput, type StepOutput, type TokenUsage, type ToolCallRecord } from './runtime/contracts.ts';
export { type Env } from './core/env.ts';
export { DONE } from './definitions/workflow/schema.ts';
export type { StepDefinition, WorkflowDefinition } from './definitions/workflow/schema.ts';
export { EmailInputSchema } from './definitions/workflow/input.ts';
export { CHECKPOINT_DATA_KEY } from './definitions/workflow/pause.ts';

// A workflow's own definition files (agent settings, data beside its steps).
export { checkDefinition, readDefinitionYaml, relPath } from './definitions/definition-file.ts';
export { loadWorkflow } from './definitions/workflow/loader.ts';
export { statemachinesDir } from './core/paths.ts';

// Free-form JSON in DynamoDB (any keys, numbers and depth): a tool's own store writes it as text.
export { documentClient, fromStoredJson, JsonObjectSchema, toStoredJson } from './core/dynamo-json.ts';

// Helpers.
export { compileExpression, ExpressionError, type CompiledExpression } from './core/expressions.ts';
export { responseFacts, type ResponseFacts } from './runtime/steps/response-facts.ts';

// Typed errors: Lambda reports the class name as `errorType`, which Retry/Catch `ErrorEquals` match.
export {
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
  causeMessage,
} from './core/errors.ts';
