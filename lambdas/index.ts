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
export { defineTool, type AwsClients, type CallContext, type TableAccess, type Toolbox, type ToolContext, type ToolDefinition, type ToolResources } from './tools/types.ts';
export { requireEnv } from './tools/toolbox.ts';
export { sendEmail } from './triggers/email/send-email.ts';

// Code steps and fast paths.
export { defineCodeStep, isReplay, NO_USAGE, sentReply, type CodeStep, type StepContext, type StepResult } from './steps/types.ts';
export { defineFastPath, type FastPath, type FastPathContext, type FastPathDecision } from './steps/fast-path.ts';
export { lookup, renderTemplate, type RenderOptions } from './steps/template.ts';

// The embeddings port (a tool resource): Bedrock's Titan Text Embeddings V2 on AWS, a lexical stand-in offline.
export { contentWords, cosine, embeddingsFromEnv, lexicalEmbeddings, TITAN_V2, type EmbeddingModel } from './models/embeddings.ts';

// What crosses between steps.
export { DONE, type DecidedBy, type Env, type GuardVerdict, type StepInput, type StepOutput, type TokenUsage, type ToolCallRecord } from './lib/contracts.ts';
export type { StepDefinition, WorkflowDefinition } from './lib/workflow/schema.ts';
export { EmailInputSchema } from './lib/workflow/input.ts';
export { CHECKPOINT_DATA_KEY } from './lib/workflow/pause.ts';

// A workflow's own definition files (agent settings, data beside its steps).
export { checkDefinition, readDefinitionYaml, relPath } from './lib/definition-file.ts';
export { loadWorkflow } from './lib/workflow/loader.ts';
export { statemachinesDir } from './lib/project.ts';

// Free-form JSON in DynamoDB (any keys, numbers and depth): a tool's own store writes it as text.
export { documentClient, fromStoredJson, JsonObjectSchema, toStoredJson } from './lib/dynamo-json.ts';

// Helpers.
export { compileExpression, ExpressionError, type CompiledExpression } from './lib/expressions.ts';
export { responseFacts, type ResponseFacts } from './lib/response-facts.ts';

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
} from './lib/errors.ts';
