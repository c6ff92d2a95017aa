/**
 * Fast paths (manifest `fastPaths`): a deterministic check tried before an LLM step's model. It
 * either decides the step (no model call) or abstains, and then the model decides as usual. For
 * the cases a rule can settle without doubt (heuristic routing: a serial number found by
 * pattern); every other case keeps the model.
 */
import type * as z from 'zod';
import { StepFailedError } from '../../core/errors.ts';
import { routeSchema } from '../contracts/prompt.ts';
import { NO_USAGE, type StepContext, type StepResult } from './types.ts';

/** What a fast path decides: a declared edge, why, and the step's declared outputs. */
export interface FastPathDecision {
  next: string;
  reason: string;
  fields?: Record<string, unknown>;
}

/** Everything a code step gets, plus the untrusted input the model would have read (an email with its body). */
export interface FastPathContext extends StepContext {
  untrusted: Record<string, unknown> | undefined;
}

/**
 * The default export of `lambdas/workflows/<workflow>/steps/<handler>.ts` named by manifest
 * `fastPaths`: a decision, or `null` to let the model decide.
 */
export type FastPath = (ctx: FastPathContext) => FastPathDecision | null | Promise<FastPathDecision | null>;

/** Type helper for fast path modules. */
export const defineFastPath = (fastPath: FastPath): FastPath => fastPath;

/** Marks fast-path decisions in `reason` (the console, the event log and `stepwise stats` read it). */
export const FAST_PATH_REASON = 'Fast path: ';

/**
 * Run a step's fast path. A decision is held to the same rules as a model's route (declared edge,
 * declared outputs, zod-checked); one that breaks them is a bug in the fast path and fails the step.
 * @returns the step result (decidedBy `code`, no model call), or undefined when the fast path abstains.
 */
export async function tryFastPath(fastPath: FastPath, ctx: FastPathContext): Promise<StepResult | undefined> {
  const decision = await fastPath(ctx);
  if (decision === null) return undefined;
  const schema = routeSchema(ctx.step) as unknown as z.ZodType<
    { next: string; reason: string } & Record<string, unknown>
  >;
  const parsed = schema.safeParse({ ...decision.fields, next: decision.next, reason: decision.reason });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new StepFailedError(
      `${ctx.step.name}: the fast path's decision is invalid: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  const { next, reason, ...fields } = parsed.data;
  return { next, reason: `${FAST_PATH_REASON}${reason}`, decidedBy: 'code', fields, toolCalls: [], usage: NO_USAGE };
}
