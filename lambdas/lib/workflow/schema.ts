import { z } from 'zod';

/** Step and workflow names: lowercase, digits and dashes (`01-extract-serial`), usable as ASL state names. */
export const StepName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,78}$/, 'lowercase letters, digits and dashes');

const RetryPolicy = z
  .object({
    /** ASL `MaxAttempts`: retries after the first attempt. */
    maxAttempts: z.number().int().min(0).max(10).default(3),
    intervalSeconds: z.number().int().min(1).default(2),
    backoffRate: z.number().min(1).default(2),
    maxDelaySeconds: z.number().int().min(1).default(30),
  })
  .strict();

/** `statemachines/<workflow>/workflow.yaml` */
export const ManifestSchema = z
  .object({
    name: StepName,
    description: z.string().min(1),
    version: z.string().min(1),
    entry: StepName,
    maxSteps: z.number().int().min(1).max(100).default(10),
    /** Where invalid routes and caught errors go. */
    fallback: StepName,
    model: z.object({ id: z.string().min(1), maxTokens: z.number().int().positive().default(1024) }).strict(),
    retry: RetryPolicy.default({ maxAttempts: 3, intervalSeconds: 2, backoffRate: 2, maxDelaySeconds: 30 }),
    /** Tools steps of this workflow may use. */
    tools: z.array(z.string().regex(/^[a-z][a-z0-9_]*$/)).default([]),
  })
  .strict();

const OutputField = z
  .object({
    type: z.enum(['string', 'number', 'boolean', 'object']),
    description: z.string().min(1),
    /** Personal data: kept out of INFO logs and the event log's plain fields. */
    pii: z.boolean().default(false),
    /**
     * `<tool>.<resultKey>`: the engine sets the field from the step's last successful call of
     * `<tool>` (its result's `<resultKey>`), whatever the model reported, and drops it when there
     * was none. For values the customer is told (a ticket id), which must never be the model's guess.
     */
    from: z
      .string()
      .regex(/^[a-z][a-z0-9_]*\.[a-zA-Z][a-zA-Z0-9_]*$/, '<tool>.<resultKey>, e.g. create_ticket.ticketId')
      .optional(),
  })
  .strict();

/** The YAML frontmatter of `statemachines/<workflow>/steps/<step>.md`. */
export const StepFrontmatterSchema = z
  .object({
    name: StepName,
    description: z.string().min(1),
    version: z.string().min(1),
    /** `llm`: the markdown body is the system prompt. `code`: `handler` names a deterministic step module. */
    kind: z.enum(['llm', 'code']),
    /** For code steps: module path relative to `lambdas/steps/` without extension, e.g. `check-warranty`. */
    handler: z.string().regex(/^[a-z0-9-]+$/).optional(),
    /** Steps this step may route to; `DONE` ends the workflow. */
    next: z.array(z.union([StepName, z.literal('DONE')])).min(1),
    tools: z.array(z.string()).default([]),
    /**
     * Tools that must have succeeded before the step may route anywhere (a reply step must have sent
     * its reply). Otherwise the step fails and the ASL Catch hands the execution to the fallback.
     */
    requires: z.array(z.string()).default([]),
    outputs: z.record(z.string().regex(/^[a-zA-Z][a-zA-Z0-9]*$/), OutputField).default({}),
  })
  .strict();

export type Manifest = z.infer<typeof ManifestSchema>;
export type StepFrontmatter = z.infer<typeof StepFrontmatterSchema>;

export interface StepDefinition extends StepFrontmatter {
  /** The markdown body: the instruction (system prompt) for LLM steps, documentation/templates for code steps. */
  instruction: string;
  /** Path of the step file, relative to the project root. */
  file: string;
}

export interface WorkflowDefinition {
  manifest: Manifest;
  /** Steps in file-name order. */
  steps: StepDefinition[];
  /** Absolute path of the workflow folder. */
  dir: string;
}
