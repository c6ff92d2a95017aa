/**
 * What a step handler accepts: the `StepInput` the compiled Task state sends and the function's
 * environment, each checked with zod before anything runs.
 */
import * as z from 'zod';
import { InvalidInputError } from '../../core/errors.ts';
import { ConsensusInputShape } from '../steps/consensus.ts';

const StepName = z.string().min(1);
const Fields = z.record(z.string(), z.unknown());

/** The payload of the compiled Task state (see src/runtime/contracts/step.ts). */
export const StepInputSchema = z.object({
  workflow: StepName,
  step: StepName,
  /** Checked against the workflow's own input schema once the workflow is known. */
  input: z.record(z.string(), z.unknown()),
  previous: z.object({
    step: z.string().nullable(),
    next: z.string(),
    reason: z.string(),
    decidedBy: z.enum(['model', 'model-text', 'code', 'offline']).nullable(),
    fields: Fields,
    data: Fields,
    count: z.number().int().nonnegative(),
  }),
  error: z.object({ Error: z.string(), Cause: z.string().default('') }).nullable(),
  count: z.number().int().positive(),
  execution: z.object({ id: z.string().min(1), name: z.string().min(1) }),
  counters: z.record(z.string(), z.number().int().nonnegative()).optional(),
  item: z.object({ map: z.string().min(1), index: z.number().int().nonnegative() }).optional(),
  // Consensus steps: a Map item (one sample) or the samples so far (see src/runtime/steps/consensus.ts).
  ...ConsensusInputShape,
});
export type ParsedStepInput = z.infer<typeof StepInputSchema>;

/** The step function's environment. */
export const StepEnv = z.object({
  WORKFLOW: z.string().optional(),
  STEP: z.string().optional(),
  MODEL_PROVIDER: z.enum(['bedrock', 'offline', 'openai']).default('offline'),
  MODEL_ID: z.string().optional(),
  /** `openai`: the chat-completions endpoint (`http://localhost:11434/v1`) and the model name it serves. */
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_MODEL: z.string().min(1).optional(),
  /** `openai`: the API key itself (local runs), or the SSM SecureString parameter holding it (deployed). */
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_API_KEY_PARAMETER: z.string().min(1).optional(),
  STATEMACHINES_DIR: z.string().optional(),
  /**
   * `summary`: the output keeps no reply text and no personal tool arguments or results (the execution
   * history records it).
   */
  STEP_OUTPUT: z.enum(['full', 'summary']).default('full'),
  /** `off`: the manifest's fast paths do not run, the model decides every LLM step (A/B of the two). */
  FAST_PATHS: z.enum(['on', 'off']).default('on'),
  EMAILS_TABLE: z.string().optional(),
  EVENTS_TABLE: z.string().optional(),
  AWS_REGION: z.string().optional(),
  AWS_ENDPOINT_URL_DYNAMODB: z.string().optional(),
  AWS_ENDPOINT_URL_BEDROCK_RUNTIME: z.string().optional(),
});
export type StepEnv = z.infer<typeof StepEnv>;

/**
 * `value` as `schema` describes it.
 * @throws InvalidInputError naming `what` and the first problem's path.
 */
export function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new InvalidInputError(`${what}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}
