import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { checkDefinition, parseDefinitionYaml, relPath } from '../lib/definition-file.ts';
import { DefinitionError } from '../lib/errors.ts';
import { StepName } from '../lib/workflow/schema.ts';

/**
 * Eval cases: `statemachines/<workflow>/evals/*.yaml`, in the seed's format (story 5.1, AC5).
 *
 * ```yaml
 * scenario_id: billing_001
 * description: ...
 * category: answer
 * input:
 *   payload: { customerId: C1001, question: ... }   # or, for an email workflow, email: { from, subject, body }
 *                                                   # or a conversation, turns: [{...}, {...}] (one execution each, in order)
 *   mock_function_responses: { lookup_account: {...} }
 *   checkpoints: [{ output: { notes: ... } }, { timeout: true }]   # resumes of the pauses reached, in order
 * expected_output:
 *   status: SUCCEEDED                               # or FAILED, with error: MaxStepsExceeded
 *   expected_steps:
 *     - step_name: 01-understand
 *       output_contains: ["NEXT_STEP: 02-look-up", "TOPIC: billing"]
 *     - step_name: 02-look-up
 *       function_call: lookup_account
 *       function_args: { customerId: C1001 }
 *   expected_function_calls: [...]
 * ```
 */

const ToolName = z.string().regex(/^[a-z][a-z0-9_]*$/);
const Args = z.record(z.string(), z.unknown());

/** What a mocked tool answers. `{ error: "..." }` (that key alone) makes the call fail with that error. */
export const MockResponseSchema = z.union([z.strictObject({ error: z.string().min(1) }), Args]);

export const EvalEmailSchema = z
  .object({
    from: z.email(),
    /** Display name of the sender. */
    from_name: z.string().optional(),
    subject: z.string(),
    body: z.string(),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict();

export const ExpectedStepSchema = z
  .object({
    step_name: StepName,
    /** Substrings of the step's text form (see `renderStepText`): `NEXT_STEP: x`, `SERIAL: SN…`, a ticket id, reply text. */
    output_contains: z.array(z.string().min(1)).default([]),
    /** A tool the step must have called. */
    function_call: ToolName.optional(),
    /** Arguments that call must have had (a subset; values compared exactly). */
    function_args: Args.optional(),
  })
  .strict()
  .refine((s) => !s.function_args || s.function_call, { message: 'function_args needs function_call', path: ['function_args'] });

/** An overall tool call: the bare name, or the name with a subset of its arguments. */
export const ExpectedFunctionCallSchema = z.union([
  ToolName.transform((function_name): { function_name: string; arguments?: Record<string, unknown> } => ({ function_name })),
  z.object({ function_name: ToolName, arguments: Args.optional() }).strict(),
]);

/** How one checkpoint (a step's `pause`) the execution reaches is resumed: `SendTaskSuccess`, `SendTaskFailure`, or left to time out. */
export const CheckpointResolutionSchema = z.union([
  z.strictObject({ output: z.unknown() }),
  z.strictObject({ fail: z.string().min(1), error: z.string().min(1).default('CheckpointRejected') }),
  z.strictObject({ timeout: z.literal(true) }),
]);

export const EvalCaseSchema = z
  .object({
    scenario_id: z.string().regex(/^[a-z0-9_-]+$/, 'lowercase letters, digits, _ and -'),
    description: z.string().min(1),
    category: z.string().min(1),
    input: z
      .object({
        /** For an email workflow: the mail, delivered through the real email ingress. */
        email: EvalEmailSchema.optional(),
        /** For any other workflow: the execution input, checked against the workflow's input schema. */
        payload: z.record(z.string(), z.unknown()).optional(),
        /** A conversation: each item one execution input, run in order; `expected_output` judges the last, the others must succeed. */
        turns: z.array(z.record(z.string(), z.unknown())).min(1).optional(),
        mock_function_responses: z.record(ToolName, MockResponseSchema).default({}),
        /** The checkpoints the execution pauses at, resumed in order (`output`, `fail`, or `timeout: true`). */
        checkpoints: z.array(CheckpointResolutionSchema).default([]),
      })
      .strict()
      .refine((i) => [i.email, i.payload, i.turns].filter((x) => x !== undefined).length === 1, { message: 'give exactly one of email and payload (or turns: a conversation)' }),
    expected_output: z
      .object({
        /** How the execution ends. @default SUCCEEDED */
        status: z.enum(['SUCCEEDED', 'FAILED', 'PAUSED']).default('SUCCEEDED'),
        /** For a FAILED execution: its error, e.g. a terminal state `MaxStepsExceeded`. */
        error: z.string().min(1).optional(),
        /** For a SUCCEEDED execution: the named outcome it ended in instead of `Done` (a manifest counter's, e.g. `IterationLimit`). */
        outcome: z.string().min(1).optional(),
        /** Omitted in legacy cases: step validation is skipped. */
        expected_steps: z.array(ExpectedStepSchema).min(1).optional(),
        /** Every tool call of the execution, in order. Omitted: not checked. */
        expected_function_calls: z.array(ExpectedFunctionCallSchema).optional(),
        /** Legacy fields of the monolithic format, kept so old cases still load. */
        scenario_instruction_used: z.string().optional(),
        processing_time_ms: z.number().positive().optional(),
      })
      .strict(),
  })
  .strict();

export type EvalCase = z.infer<typeof EvalCaseSchema>;
export type ExpectedStep = z.infer<typeof ExpectedStepSchema>;
export type ExpectedFunctionCall = z.infer<typeof ExpectedFunctionCallSchema>;

/** Parse one eval file; errors name the file and the field. */
export function parseEvalCase(file: string, text: string): EvalCase {
  return checkDefinition(EvalCaseSchema, parseDefinitionYaml(text, file), file);
}

/** All eval cases of a workflow folder (its `evals/`), by file name; scenario ids must be unique. */
export function loadEvalCases(workflowDir: string): EvalCase[] {
  return loadEvalCasesFrom(join(workflowDir, 'evals'));
}

/** All eval cases (`*.yaml`, `*.yml`) of a folder, by file name; none when it does not exist. Scenario ids must be unique. */
export function loadEvalCasesFrom(dir: string): EvalCase[] {
  if (!existsSync(dir)) return [];
  const seen = new Map<string, string>();
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => {
      const file = relPath(join(dir, f));
      const c = parseEvalCase(file, readFileSync(join(dir, f), 'utf8'));
      const twin = seen.get(c.scenario_id);
      if (twin) throw new DefinitionError(file, 'scenario_id', `duplicate "${c.scenario_id}" (also in ${twin})`);
      seen.set(c.scenario_id, file);
      return c;
    });
}
