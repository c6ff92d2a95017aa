/**
 * The investigation's rules, pure (no model, no clock): how many steps to plan, what one step's
 * report does to the history (total_steps raised, backtracks kept), when the investigation ends
 * (certain, complete, budget) and what the resumer of a checkpoint must do next.
 */
import * as z from 'zod';

/** Confidence levels, lowest first; `certain` ends the investigation. */
export const CONFIDENCE = ['exploring', 'low', 'medium', 'high', 'very_high', 'almost_certain', 'certain'] as const;
export type Confidence = (typeof CONFIDENCE)[number];

/** The execution input (the manifest's JSON Schema checks it first; this types it). */
export const InvestigationInput = z.object({
  request: z.string().min(1),
  material: z.array(z.object({ path: z.string().min(1), content: z.string() })).default([]),
  consult: z.array(z.string().min(1)).optional(),
  document: z.array(z.string().min(1)).optional(),
  checkpoints: z.boolean().default(false),
  type: z.string().default('incident'),
});
export type InvestigationInput = z.infer<typeof InvestigationInput>;

/**
 * Steps the budget allows: the proposal and the plan, an investigate + record pair per step, the synthesis, the
 * analysis, its citation check and an escalation when the check fails, within `maxSteps`.
 */
export function stepBudget(maxSteps: number): number {
  return Math.max(1, Math.floor((maxSteps - 6) / 2));
}

/**
 * `statemachines/investigation/types.yaml`: per investigation type, the step bounds and whether it pauses between
 * steps.
 */
export const InvestigationTypeSchema = z
  .object({
    min_steps: z.number().int().min(1).default(1),
    max_steps: z.number().int().min(1).default(6),
    /** `always`: a checkpoint before every further step; `never`; `on_request`: when the input sets `checkpoints`. */
    pauses: z.enum(['always', 'never', 'on_request']).default('on_request'),
  })
  .strict()
  .refine((t) => t.min_steps <= t.max_steps, 'min_steps must not exceed max_steps');
export type InvestigationType = z.infer<typeof InvestigationTypeSchema>;
export const TypesFileSchema = z
  .object({ types: z.record(z.string().regex(/^[a-z_]+$/), InvestigationTypeSchema) })
  .strict();

/**
 * Whether the investigation pauses before the next step: by its type, or as the input asks when the type leaves it to
 * the input.
 */
export const pausesBetweenSteps = (type: InvestigationType, requested: boolean) =>
  type.pauses === 'always' || (type.pauses === 'on_request' && requested);

/** What the planning step proposed (its outputs; the model may leave some out). */
export const PlanProposal = z.object({
  proposed_total_steps: z.number().int().optional(),
  proposed_steps: z.string().optional(),
});

/**
 * Bound the planner's proposal: the total within the type's
 * [min_steps, max_steps] and the budget, every clip recorded. A derived plan (countable work) is
 * kept as counted (capped by the budget); no usable proposal falls back to the estimate.
 */
export function boundPlan(
  estimate: Plan,
  proposal: z.infer<typeof PlanProposal>,
  type: InvestigationType,
  budget: number,
): Plan & { clipped: string[]; proposed_total_steps: number | null } {
  const proposed = proposal.proposed_total_steps ?? null;
  if (estimate.plan_basis === 'derived') return { ...estimate, clipped: [], proposed_total_steps: proposed };
  const clipped: string[] = [];
  const max = Math.min(type.max_steps, budget);
  let total = proposed !== null && proposed > 0 ? proposed : estimate.total_steps;
  if (proposed === null || proposed <= 0)
    clipped.push(`no usable proposal: the estimate (${estimate.total_steps}) is planned`);
  if (total > max) {
    clipped.push(
      `proposed ${total} steps, clipped to ${max} (${max === budget ? 'the step budget' : "the type's max_steps"})`,
    );
    total = max;
  }
  if (total < type.min_steps) {
    clipped.push(`proposed ${total} steps, raised to the type's min_steps ${type.min_steps}`);
    total = type.min_steps;
  }
  return {
    ...estimate,
    total_steps: total,
    plan_basis: proposed !== null && proposed > 0 ? 'proposed' : 'estimated',
    clipped,
    proposed_total_steps: proposed,
  };
}

export interface Plan {
  total_steps: number;
  /**
   * `derived`: counted from the work (one step per model or file); `proposed`: the planning model's, bounded;
   * `estimated`: from the request's complexity.
   */
  plan_basis: 'derived' | 'proposed' | 'estimated';
  /** The countable work, one item per step, when derived. */
  work_items: string[];
  complexity: 'simple' | 'moderate' | 'complex';
}

/**
 * Plan the investigation. Countable work is derived: one step per model to consult, or one
 * discovery step plus one per file to document. Otherwise the request's complexity (how much
 * material, how many files) gives the estimate, which steps may raise later. Both are capped by
 * the budget.
 */
export function planSteps(
  input: Pick<InvestigationInput, 'material' | 'consult' | 'document'> & Record<string, unknown>,
  budget: number,
): Plan {
  const cap = (n: number) => Math.max(1, Math.min(n, budget));
  if (input.consult?.length)
    return {
      total_steps: cap(input.consult.length),
      plan_basis: 'derived',
      work_items: input.consult,
      complexity: 'moderate',
    };
  if (input.document?.length)
    return {
      total_steps: cap(1 + input.document.length),
      plan_basis: 'derived',
      work_items: ['discovery', ...input.document],
      complexity: 'moderate',
    };
  const lines = input.material.reduce((n, f) => n + f.content.split('\n').length, 0);
  const files = input.material.length;
  const complexity = files <= 1 && lines <= 40 ? 'simple' : files <= 3 && lines <= 200 ? 'moderate' : 'complex';
  return {
    total_steps: cap({ simple: 2, moderate: 3, complex: 5 }[complexity]),
    plan_basis: 'estimated',
    work_items: [],
    complexity,
  };
}

/** What `02-investigate` reports (its outputs; the model may leave some out). */
export const StepReport = z.object({
  step_number: z.number().int().min(1),
  total_steps: z.number().int().min(1),
  next_step_required: z.boolean(),
  confidence: z.enum(CONFIDENCE),
  findings: z.string().min(1),
  hypothesis: z.string().optional(),
  files_checked: z.string().optional(),
  relevant_context: z.string().optional(),
  backtrack_from_step: z.number().int().min(1).optional(),
});
export type StepReport = z.infer<typeof StepReport>;

/** One entry of the history: appended, never changed. A backtrack is a new entry naming the steps it revises. */
export interface HistoryEntry {
  step_number: number;
  total_steps: number;
  confidence: Confidence;
  findings: string;
  hypothesis?: string;
  files_checked: string[];
  relevant_context: string[];
  next_step_required: boolean;
  /** The steps this one revises (from `backtrack_from_step` to the one before it); their entries stay. */
  revises?: number[];
  /** What the resumer of the checkpoint before this step sent. */
  checkpoint?: unknown;
  /** The work item of a derived plan this step covered. */
  item?: string;
  /** How the record step changed the report: `total_steps raised to 4`, `step_number 2 expected`. */
  adjustments?: string[];
}

/** How an investigation ended. */
export type Outcome = 'certain' | 'complete' | 'budget_exhausted' | 'escalated';

export interface Recorded {
  entry: HistoryEntry;
  history: HistoryEntry[];
  total_steps: number;
  /** Route on to another step (`false`: synthesize). */
  continue: boolean;
  /** When it does not continue: why. */
  outcome?: Outcome;
  required_actions: string[];
}

const list = (text: string | undefined) =>
  (text ?? '')
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);

export interface RecordContext {
  history: readonly HistoryEntry[];
  /** The current `total_steps` (the plan's, as adjusted so far). */
  total_steps: number;
  plan: Pick<Plan, 'plan_basis' | 'work_items'>;
  budget: number;
  /** The resumer's output since the previous step, if any. */
  checkpoint?: unknown;
}

/**
 * Record one step's report. The step number is the history's next (a report that says otherwise is
 * corrected and the correction noted). `total_steps` takes the report's re-estimate (a derived count
 * is kept) and is raised to the step number when it exceeds it. A `backtrack_from_step` marks the
 * earlier steps it revises; their entries stay. The investigation ends at `certain`, when the step
 * says no further step is needed (a derived plan runs all its items), or when the budget is spent.
 */
export function recordStep(report: StepReport, ctx: RecordContext): Recorded {
  const step_number = ctx.history.length + 1;
  const adjustments: string[] = [];
  if (report.step_number !== step_number)
    adjustments.push(`step_number ${report.step_number} reported, ${step_number} recorded`);
  let total_steps = ctx.plan.plan_basis === 'derived' ? ctx.total_steps : report.total_steps;
  if (ctx.plan.plan_basis === 'derived' && report.total_steps !== ctx.total_steps)
    adjustments.push(`total_steps ${report.total_steps} reported, derived ${ctx.total_steps} kept`);
  if (step_number > total_steps) {
    adjustments.push(`total_steps raised from ${total_steps} to ${step_number}`);
    total_steps = step_number;
  }
  const backtrack = report.backtrack_from_step;
  if (backtrack !== undefined && backtrack >= step_number)
    adjustments.push(`backtrack_from_step ${backtrack} ignored: not an earlier step`);
  const revises =
    backtrack !== undefined && backtrack < step_number
      ? Array.from({ length: step_number - backtrack }, (_, i) => backtrack + i)
      : undefined;
  const item = ctx.plan.work_items[step_number - 1];
  const entry: HistoryEntry = {
    step_number,
    total_steps,
    confidence: report.confidence,
    findings: report.findings,
    ...(report.hypothesis && { hypothesis: report.hypothesis }),
    files_checked: list(report.files_checked),
    relevant_context: list(report.relevant_context),
    next_step_required: report.next_step_required,
    ...(revises && { revises }),
    ...(ctx.checkpoint !== undefined && { checkpoint: ctx.checkpoint }),
    ...(item !== undefined && { item }),
    ...(adjustments.length && { adjustments }),
  };
  const history = [...ctx.history, entry];
  const derivedLeft = ctx.plan.plan_basis === 'derived' && step_number < total_steps;
  let outcome: Outcome | undefined;
  if (report.confidence === 'certain') outcome = 'certain';
  else if (!report.next_step_required && !derivedLeft) outcome = 'complete';
  else if (step_number >= ctx.budget) outcome = 'budget_exhausted';
  // Continuing past the estimate raises it: the next step is counted in.
  if (!outcome && step_number + 1 > total_steps) total_steps = step_number + 1;
  return {
    entry,
    history,
    total_steps,
    continue: outcome === undefined,
    ...(outcome && { outcome }),
    required_actions: outcome ? [] : requiredActions(entry, total_steps, ctx.plan.work_items[step_number]),
  };
}

/**
 * What must be investigated before the next step, by confidence (the required actions):
 * broad discovery while exploring, verification as confidence grows.
 */
export function requiredActions(entry: HistoryEntry, total_steps: number, nextItem?: string): string[] {
  const next = `Step ${entry.step_number + 1} of ${total_steps}`;
  if (nextItem !== undefined) return [`${next}: work on ${nextItem}`, 'Record what it adds to the findings so far'];
  switch (entry.confidence) {
    case 'exploring':
    case 'low':
      return [
        `${next}: read the material not yet checked`,
        'List the symptoms and the timeline',
        'Form a first hypothesis and what would refute it',
      ];
    case 'medium':
    case 'high':
      return [
        `${next}: verify the hypothesis against the material`,
        'Look for evidence that contradicts it',
        'Note the exact files and lines',
      ];
    default:
      return [`${next}: confirm the root cause with the remaining evidence`, 'Check nothing contradicts it'];
  }
}

/** The steps revised by a later backtrack: their findings are not part of the conclusion (but stay in the history). */
export function supersededSteps(history: readonly HistoryEntry[]): Set<number> {
  return new Set(history.flatMap((e) => e.revises ?? []));
}

export interface Synthesis {
  outcome: Outcome;
  confidence: Confidence;
  steps_taken: number;
  total_steps: number;
  conclusion: string;
  findings: string[];
  files_checked: string[];
  /** Steps whose findings a backtrack revised. */
  revised_steps: number[];
}

/** The conclusion from the history: the findings of the steps no backtrack revised, the last confidence. */
export function synthesize(history: readonly HistoryEntry[], outcome: Outcome, total_steps: number): Synthesis {
  const superseded = supersededSteps(history);
  const kept = history.filter((e) => !superseded.has(e.step_number));
  const last = history.at(-1);
  return {
    outcome,
    confidence: last?.confidence ?? 'exploring',
    steps_taken: history.length,
    total_steps,
    conclusion: last?.findings ?? 'No step was recorded.',
    findings: kept.map((e) => `Step ${e.step_number}: ${e.findings}`),
    files_checked: [...new Set(history.flatMap((e) => e.files_checked))],
    revised_steps: [...superseded].sort((a, b) => a - b),
  };
}

/** A step the expert analysis cites but may not rest on. */
export interface InvalidCitation {
  step: number;
  why: 'not recorded' | 'revised by a backtrack';
}

/**
 * The step numbers an analysis cites: every "(step 3)", "(steps 2, 4)" or "(steps 2 and 4)" in
 * its text, and the numbers of its `cited_steps` list; sorted, once each.
 */
export function citedSteps(analysis: string, citedList: string): number[] {
  const inText = [...analysis.matchAll(/\(steps?\s+(\d+(?:\s*(?:,|and|&)\s*\d+)*)\)/gi)].flatMap((m) =>
    m[1]!.match(/\d+/g)!.map(Number),
  );
  const listed = (citedList.match(/\d+/g) ?? []).map(Number);
  return [...new Set([...inText, ...listed])].sort((a, b) => a - b);
}

/**
 * The citations of the expert analysis that the history does not back: a step never recorded, or
 * one a later backtrack revised (its findings were corrected, so a claim cannot rest on them).
 */
export function invalidCitations(history: readonly HistoryEntry[], cited: readonly number[]): InvalidCitation[] {
  const recorded = new Set(history.map((e) => e.step_number));
  const superseded = supersededSteps(history);
  return cited.flatMap((step): InvalidCitation[] =>
    !recorded.has(step)
      ? [{ step, why: 'not recorded' }]
      : superseded.has(step)
        ? [{ step, why: 'revised by a backtrack' }]
        : [],
  );
}
