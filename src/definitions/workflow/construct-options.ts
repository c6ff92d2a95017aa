/**
 * The options of the construct steps (`kind: map | parallel | workflow | wait`), one per kind, in a
 * step's frontmatter. Their checks against the graph are in ./constructs/, their states in
 * src/cdk/constructs/compile/.
 */
import * as z from 'zod';
import { StatePath } from './state-path.ts';
import { StepName } from './step-name.ts';

/** Inline Map states run at most this many iterations at once (Step Functions' cap for inline mode). */
export const INLINE_MAP_MAX_CONCURRENCY = 40;

const FieldName = z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]*$/, 'camelCase or snake_case');

export const MapOptionSchema = z
  .object({
    items: StatePath.describe('The state array to run over (`data.attachments`): one iteration per element.'),
    entry: StepName.describe(
      "The first step of each item's chain. The chain's steps route among themselves; `DONE` ends the item.",
    ),
    as: FieldName.default('item').describe(
      "The name of the element in each item's `data` (`data.item`); its position is `<as>Index`.",
    ),
    output: FieldName.describe(
      "The output that holds the items' results, in item order: `{ index, ok: true, step, fields }` (the outputs of the step that ended the item) or `{ index, ok: false, error }`.",
    ),
    maxItems: z
      .number()
      .int()
      .min(1)
      .default(40)
      .describe(
        'The most elements the step takes; a longer array goes to the fallback (`TooManyItems`). Bounded at validate by the execution history and payload limits.',
      ),
    maxConcurrency: z
      .number()
      .int()
      .min(1)
      .max(INLINE_MAP_MAX_CONCURRENCY)
      .default(10)
      .describe('ASL `MaxConcurrency`: items that run at once (an inline Map runs at most 40).'),
    toleratedFailures: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Failed items tolerated; one more and the step fails (`ItemsFailedError`). Default: 0.'),
    toleratedFailurePercentage: z
      .number()
      .min(0)
      .max(100)
      .optional()
      .describe('Instead of a count: the share of failed items tolerated, in percent.'),
    onFailure: StepName.optional().describe(
      'The step a failed map goes to (too many failed items or items, a missing array), with the error at `$.error`. Default: the fallback.',
    ),
  })
  .strict();
export type MapOption = z.infer<typeof MapOptionSchema>;

export const ParallelOptionSchema = z
  .object({
    branches: z
      .record(FieldName, StepName)
      .refine((b) => Object.keys(b).length >= 2, 'two or more branches')
      .describe(
        "Branch name → the first step of its chain. The outputs of the step that ends a branch land under the branch's name (`data.<branch>`).",
      ),
    onFailure: StepName.optional().describe(
      'The step a failed branch goes to (`BranchFailed`, naming the branch, at `$.error`). Default: the fallback.',
    ),
  })
  .strict();
export type ParallelOption = z.infer<typeof ParallelOptionSchema>;

export const WorkflowCallSchema = z
  .object({
    name: StepName.describe('The workflow of the project to start (its folder name).'),
    input: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), StatePath)
      .default({})
      .describe("The child's input, each field read from state (`orderId: data.order.id`)."),
    outputs: z
      .array(FieldName)
      .default([])
      .describe(
        "Fields of the child's result (`result.data`) that become this step's outputs; a child that ends without one fails the step.",
      ),
  })
  .strict();
export type WorkflowCall = z.infer<typeof WorkflowCallSchema>;

/** The longest wait: a Standard execution lasts at most a year. */
export const MAX_WAIT_SECONDS = 31_536_000;

export const WaitOptionSchema = z
  .object({
    seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_WAIT_SECONDS)
      .optional()
      .describe('Wait this long (`259200`: three days).'),
    until: StatePath.optional().describe(
      'Wait until the ISO 8601 timestamp at this path of the state (`data.remindAt`); a time in the past does not wait.',
    ),
  })
  .strict()
  .refine((w) => (w.seconds === undefined) !== (w.until === undefined), 'exactly one of seconds and until');
export type WaitOption = z.infer<typeof WaitOptionSchema>;
