import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { DefinitionError } from '../core/errors.ts';
import { checkDefinition, parseDefinitionYaml, relPath } from './definition-file.ts';
import { StepName, type WorkflowDefinition } from './workflow/schema.ts';

/**
 * Eval cases: `statemachines/<workflow>/evals/*.yaml` (the format documented in docs/reference/eval-cases.md).
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
 *   items: { 03-classify-all: { succeeded: 2, failed: 1 } }   # per map step
 *   branches: { 05-look-up: { order: FAILED } }               # per parallel step
 *   expected_function_calls: [...]
 * ```
 */

const ToolName = z.string().regex(/^[a-z][a-z0-9_]*$/);
const Args = z.record(z.string(), z.unknown());

/** What a mocked tool answers. `{ error: "..." }` (that key alone) makes the call fail with that error. */
export const MockResponseSchema = z.union([
  z.strictObject({ error: z.string().min(1).describe('The call fails with this error.') }),
  Args,
]);

export const EvalEmailSchema = z
  .object({
    from: z.email().describe("The sender's address."),
    from_name: z.string().optional().describe("The sender's display name."),
    subject: z.string().describe('The subject line.'),
    body: z.string().describe('The plain-text body.'),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe('Extra headers (`Auto-Submitted`, `X-SES-Spam-Verdict`, ...).'),
    attachments: z
      .array(
        z
          .object({
            name: z.string().min(1).describe('The file name.'),
            contentType: z
              .string()
              .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type such as image/jpeg')
              .describe('The MIME type (`image/jpeg`).'),
            bytes: z.number().int().nonnegative().describe('The size; the content is that many filler bytes.'),
          })
          .strict(),
      )
      .optional()
      .describe('Attachments, in mail order: the record lists them as `input.email.attachments`.'),
  })
  .strict();

export const ExpectedStepSchema = z
  .object({
    step_name: StepName.describe('The step expected at this position.'),
    output_contains: z
      .array(z.string().min(1))
      .default([])
      .describe("Substrings of the step's text form: `NEXT_STEP: x`, `SERIAL: SN…`, a ticket id, reply text."),
    function_call: ToolName.optional().describe('A tool the step must have called.'),
    function_args: Args.optional().describe('Arguments that call must have had (a subset; values compared exactly).'),
  })
  .strict()
  .refine((s) => !s.function_args || s.function_call, {
    message: 'function_args needs function_call',
    path: ['function_args'],
  });

/** An overall tool call: the bare name, or the name with a subset of its arguments. */
export const ExpectedFunctionCallSchema = z.union([
  ToolName.transform(
    (function_name): { function_name: string; arguments?: Record<string, unknown>; failed?: boolean } => ({
      function_name,
    }),
  ),
  z
    .object({
      function_name: ToolName.describe('The tool.'),
      arguments: Args.optional().describe('A subset of its arguments, compared exactly.'),
      failed: z
        .boolean()
        .optional()
        .describe('`true`: the call must have failed (an `{ error }` mock); `false`: it must have succeeded.'),
    })
    .strict(),
]);

/** What a map step's items must have done: each count given is compared exactly. */
export const ExpectedItemsSchema = z
  .object({
    succeeded: z.number().int().nonnegative().optional().describe('Items that ended with a result.'),
    failed: z.number().int().nonnegative().optional().describe('Items that failed (reported with their error).'),
  })
  .strict();

/**
 * How one checkpoint (a step's `pause`) the execution reaches is resumed: `SendTaskSuccess`, `SendTaskFailure`, or left
 * to time out.
 */
export const CheckpointResolutionSchema = z.union([
  z.strictObject({ output: z.unknown().describe('`SendTaskSuccess`: the next step reads it as `data.checkpoint`.') }),
  z.strictObject({
    fail: z.string().min(1).describe('`SendTaskFailure` with this cause: caught to the fallback.'),
    error: z.string().min(1).default('CheckpointRejected').describe('The error name of `fail`.'),
  }),
  z.strictObject({
    timeout: z.literal(true).describe('Let the checkpoint time out: the execution takes `pause.onTimeout`.'),
  }),
]);

export const EvalCaseSchema = z
  .object({
    scenario_id: z
      .string()
      .regex(/^[a-z0-9_-]+$/, 'lowercase letters, digits, _ and -')
      .describe('The case id, unique in the folder.'),
    description: z.string().min(1).describe('What the case checks.'),
    category: z.string().min(1).describe('A label to group cases by.'),
    input: z
      .object({
        email: EvalEmailSchema.optional().describe(
          'For an email workflow: the mail, delivered through the real email ingress.',
        ),
        payload: z
          .record(z.string(), z.unknown())
          .optional()
          .describe("For any other workflow: the execution input, checked against the workflow's input schema."),
        turns: z
          .array(z.record(z.string(), z.unknown()))
          .min(1)
          .optional()
          .describe(
            'A conversation: each item one execution input, run in order; `expected_output` judges the last, the others must succeed.',
          ),
        mock_function_responses: z
          .record(ToolName, MockResponseSchema)
          .default({})
          .describe(
            "Each tool's answer (`{ error: ... }` fails the call); arguments are checked against the real tool. A tool without a mock runs on its `evalPorts` or fails.",
          ),
        checkpoints: z
          .array(CheckpointResolutionSchema)
          .default([])
          .describe(
            'The checkpoints the execution pauses at (a `pause` or an `event` step), resumed in order: `output` (an event step: the event detail), `fail`, or `timeout: true`.',
          ),
      })
      .strict()
      .refine((i) => [i.email, i.payload, i.turns].filter((x) => x !== undefined).length === 1, {
        message: 'give exactly one of email and payload (or turns: a conversation)',
      })
      .describe('What the case runs: exactly one of `email`, `payload` and `turns`, with its mocks.'),
    expected_output: z
      .object({
        status: z
          .enum(['SUCCEEDED', 'FAILED', 'PAUSED'])
          .default('SUCCEEDED')
          .describe('How the execution ends; `PAUSED`: left at a checkpoint.'),
        error: z
          .string()
          .min(1)
          .optional()
          .describe('For a FAILED execution: its error, e.g. the terminal state `MaxStepsExceeded`.'),
        outcome: z
          .string()
          .min(1)
          .optional()
          .describe(
            "For a SUCCEEDED execution: the named outcome it ended in instead of `Done` (a manifest counter's, e.g. `IterationLimit`).",
          ),
        expected_steps: z
          .array(ExpectedStepSchema)
          .min(1)
          .optional()
          .describe('The step sequence; the first diverging step is reported. Omitted: steps are not checked.'),
        items: z
          .record(StepName, ExpectedItemsSchema)
          .optional()
          .describe(
            'Per map step: how many of its items succeeded and failed (the last time it ran). Omitted: not checked.',
          ),
        branches: z
          .record(StepName, z.record(z.string(), z.enum(['SUCCEEDED', 'FAILED'])))
          .optional()
          .describe(
            'Per parallel step: how each named branch ended (the last time it ran), e.g. `{ order: FAILED }`. Omitted: not checked.',
          ),
        expected_function_calls: z
          .array(ExpectedFunctionCallSchema)
          .optional()
          .describe(
            'Every tool call of the execution, in order, failed ones included (`failed: true`). Omitted: not checked.',
          ),
        scenario_instruction_used: z
          .string()
          .optional()
          .describe("Legacy field of the single-prompt agent's case format, ignored."),
        processing_time_ms: z
          .number()
          .positive()
          .optional()
          .describe(
            'The time the case may take on the local runtime (all its turns and checkpoints), ms: a case that takes longer fails.',
          ),
      })
      .strict()
      .describe('What the execution must do.'),
  })
  .strict()
  .meta({ title: 'eval case' });

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

/**
 * All eval cases (`*.yaml`, `*.yml`) of a folder, by file name; none when it does not exist. Scenario ids must be
 * unique.
 */
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

/** A dot-separated path into the state's `data` (what the step and the steps before it produced). */
const DataPath = z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'a dot-separated path into data');

/**
 * A transition rule: where a step must route when the data says so (an identifier found goes to
 * the step that looks it up). Declared once in `statemachines/<workflow>/eval-rules.yaml`, checked on every
 * step of every eval case, whatever the case expects.
 */
export const TransitionRuleSchema = z
  .object({
    name: z.string().min(1).describe('What the rule guarantees, as a failure reports it.'),
    step: StepName.describe('The step whose route the rule checks.'),
    when: z
      .object({
        present: z.array(DataPath).default([]).describe('Paths that are set (not null, not empty text).'),
        absent: z.array(DataPath).default([]).describe('Paths that are not set.'),
        equals: z.record(DataPath, z.unknown()).default({}).describe('Paths and the values they hold.'),
      })
      .strict()
      .describe('Read in `data` after the step ran (its outputs merged in); all must hold for the rule to apply.'),
    next: z
      .array(z.union([StepName, z.literal('DONE')]))
      .min(1)
      .describe('The routes allowed when the rule applies.'),
  })
  .strict();

export const TransitionRulesSchema = z
  .object({ rules: z.array(TransitionRuleSchema).min(1).describe('The rules, each checked on every case.') })
  .strict()
  .meta({ title: 'eval rules' });

export type TransitionRule = z.infer<typeof TransitionRuleSchema>;

/** The file of a workflow's transition rules, beside its `evals/` folder. */
export const EVAL_RULES_FILE = 'eval-rules.yaml';

/**
 * A workflow's transition rules (`eval-rules.yaml`), none when it has no such file; each rule names
 * a step of the workflow and only that step's declared edges.
 */
export function loadTransitionRules(def: WorkflowDefinition): TransitionRule[] {
  const path = join(def.dir, EVAL_RULES_FILE);
  if (!existsSync(path)) return [];
  const file = relPath(path);
  const { rules } = checkDefinition(TransitionRulesSchema, parseDefinitionYaml(readFileSync(path, 'utf8'), file), file);
  for (const [i, rule] of rules.entries()) {
    const step = def.steps.find((s) => s.name === rule.step);
    if (!step) throw new DefinitionError(file, `rules.${i}.step`, `unknown step "${rule.step}"`);
    const undeclared = rule.next.find((n) => !step.next.includes(n));
    if (undeclared !== undefined)
      throw new DefinitionError(file, `rules.${i}.next`, `"${undeclared}" is not a declared edge of ${step.name}`);
  }
  return rules;
}
