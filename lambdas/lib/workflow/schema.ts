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

const EnvVarName = z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'UPPER_SNAKE_CASE');

/** A path into the execution state: `data.<field>...` (what earlier steps produced) or `input.<field>...` (the execution input). */
export const StatePath = z.string().regex(/^(data|input)(\.[A-Za-z0-9_-]+)+$/, 'data.<field> or input.<field> (dot-separated)');

/**
 * How executions of the workflow start. Each becomes AWS resources in the workflow's stack:
 * `email` an SES receipt rule and the email ingress (the execution input is `{ email }`, the body
 * is untrusted and read from the emails table), `eventbridge` a rule on `bus` whose matching
 * events start an execution with the event's `detail` as input, `api` direct `StartExecution`
 * (the state machine ARN is a stack output).
 */
export const TriggerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('email') }).strict(),
  z
    .object({
      type: z.literal('eventbridge'),
      /** The bus name; `default` is the account's default bus. */
      bus: z.string().regex(/^[A-Za-z0-9._\-/]{1,256}$/).default('default'),
      /** An EventBridge event pattern (content filter). */
      pattern: z.record(z.string(), z.unknown()).refine((p) => Object.keys(p).length > 0, 'an empty pattern matches nothing'),
    })
    .strict(),
  z.object({ type: z.literal('api') }).strict(),
]);

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
    /** Tools steps of this workflow may use; each is the module `lambdas/workflows/<workflow>/tools/<name, _ as ->.ts`. */
    tools: z.array(z.string().regex(/^[a-z][a-z0-9_]*$/, 'snake_case tool name')).default([]),
    /**
     * The execution input (not for `email` workflows, whose input the email trigger defines): its
     * JSON Schema, checked when an execution starts and by every step; `untrusted` names the
     * top-level input fields written by outsiders, which steps with `readsUntrusted: false` never see.
     */
    input: z
      .object({
        schema: z.record(z.string(), z.unknown()),
        untrusted: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).default([]),
      })
      .strict()
      .optional(),
    /** How executions start. @default [{ type: api }] */
    triggers: z.array(TriggerSchema).min(1).default([{ type: 'api' }]),
    /** Local runs only: environment variables added to every function of the workflow (a value naming a file of the workflow folder becomes its path). */
    local: z.object({ env: z.record(EnvVarName, z.string()).default({}) }).strict().default({ env: {} }),
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
    /** For code steps: the module `lambdas/workflows/<workflow>/steps/<handler>.ts` (its default export), e.g. `check-warranty`. */
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
    /**
     * Tool arguments the engine fills from state, per tool: `{ create_ticket: { serialNumber: data.serialNumber } }`.
     * The model never sees a bound argument, and a call in which it sets one is refused.
     */
    bind: z.record(z.string(), z.record(z.string(), StatePath)).default({}),
    /** LLM steps: whether the prompt includes the input fields the trigger marks untrusted (the email). @default true */
    readsUntrusted: z.boolean().default(true),
    /** LLM steps: the sampling temperature. @default 0 */
    temperature: z.number().min(0).max(1).default(0),
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
