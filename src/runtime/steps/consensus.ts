/**
 * Consensus for LLM steps (`consensus:` in a step's frontmatter): the step is sampled at several
 * temperatures in waves of inline Map states, and the samples vote.
 *
 * The vote, a pure function of the samples:
 * - A sample's vote is its route, plus the declared output `vote` when set (`selectedTool`).
 * - Discarded, never counted: a sample that failed (kept with its error class and message, so a
 *   step whose every sample failed says why), and one whose `vote` value is not one of `choices`
 *   (an invented tool name).
 * - Ranking: most votes first; a tie goes to the value whose coldest sample is coldest (the
 *   model's most likely answer), then to the one sampled first. The winning value's coldest sample
 *   supplies the fields (tool arguments) and the reason.
 * - Early exit: after each wave the vote is decided when the leader has more votes than the
 *   runner-up plus every sample not yet taken, i.e. it can be neither overtaken nor tied. With the
 *   default waves (a majority first, then the rest) a unanimous first wave saves the second one.
 *
 * The compiler (`src/cdk/constructs/compile/consensus.ts`) runs the same step Lambda in three phases:
 * `sample` (one model call at the item's temperature, inside the Map), `tally` (decided yet?) and
 * the step itself (the final vote, recorded like any step).
 */
import * as z from 'zod';
import { causeMessage, InvalidModelOutputError } from '../../core/errors.ts';
import { consensusChoices, type SampleItem } from '../../definitions/workflow/consensus.ts';
import type { Consensus, StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { StepInput } from '../contracts/step.ts';
import { type StepResult, sumUsage } from './types.ts';

/** What one sample returned (the Map keeps these), or why it failed. */
export const SampleResultSchema = z.object({
  sample: z.number().int().positive(),
  temperature: z.number(),
  next: z.string().optional(),
  reason: z.string().optional(),
  decidedBy: z.enum(['model', 'model-text', 'code', 'offline']).optional(),
  fields: z.record(z.string(), z.unknown()).optional(),
  usage: z
    .object({
      modelCalls: z.number(),
      inputTokens: z.number(),
      outputTokens: z.number(),
      cacheReadInputTokens: z.number(),
      cacheWriteInputTokens: z.number(),
    })
    .optional(),
  error: z.unknown().optional(),
});
export type SampleResult = z.infer<typeof SampleResultSchema>;

/** The consensus parts of a step input: a Map item (`sample`) or the samples so far (`consensus`). */
export const ConsensusInputShape = {
  sample: z.object({ sample: z.number().int().positive(), temperature: z.number().min(0).max(1) }).optional(),
  consensus: z
    .object({
      /** Each wave's samples, by wave (`w1`, `w2`, ...), as the Map states left them. */
      votes: z.record(z.string(), z.array(SampleResultSchema)),
      /** false: a tally between waves (decided yet?); true: the step's final vote. */
      final: z.boolean(),
    })
    .optional(),
};
export type ConsensusInput = {
  sample?: SampleItem;
  consensus?: { votes: Record<string, SampleResult[]>; final: boolean };
};

/** One voted value and its samples. */
export interface Candidate {
  next: string;
  /** The voted output's value (null without `vote`, or when the sample set none). */
  value: unknown;
  count: number;
  /** The winning representative: the coldest sample (then the first). */
  coldest: SampleResult;
}

/** The vote over the samples taken so far. */
export interface Tally {
  /** Candidates, best first (see the ranking rule above). */
  ranking: Candidate[];
  taken: number;
  remaining: number;
  discarded: { sample: number; why: string }[];
  /** The leader can no longer be overtaken or tied (always true once every sample is taken and one is valid). */
  decided: boolean;
}

/** How long a sample's error message may be in the vote's summary and the step's error. */
const MAX_SAMPLE_MESSAGE = 200;

/**
 * A failed sample's error as `<class>: <message>`: the Map keeps what the ASL caught (`{ Error,
 * Cause }`, the Cause being the Lambda's error JSON), or only the class from an older state machine.
 */
export function sampleError(error: unknown): string {
  if (error === undefined || error === null) return 'no route';
  if (typeof error === 'string') return error;
  const { Error: name, Cause: cause } = error as { Error?: unknown; Cause?: unknown };
  const message = typeof cause === 'string' && cause ? causeMessage(cause) : undefined;
  const shown =
    message && message.length > MAX_SAMPLE_MESSAGE ? `${message.slice(0, MAX_SAMPLE_MESSAGE - 1)}…` : message;
  return `${typeof name === 'string' ? name : 'Error'}${shown ? `: ${shown}` : ''}`;
}

/** The reasons samples were discarded, each once with the samples it applies to. */
function discardedSummary(discarded: Tally['discarded']): string {
  const byWhy = new Map<string, number[]>();
  for (const { sample, why } of discarded) byWhy.set(why, [...(byWhy.get(why) ?? []), sample]);
  return [...byWhy]
    .map(([why, samples]) => `${samples.length === 1 ? 'sample' : 'samples'} ${samples.join(', ')}: ${why}`)
    .join('; ');
}

const colder = (a: SampleResult, b: SampleResult) => a.temperature - b.temperature || a.sample - b.sample;

/** Count the samples (see the module comment for the rules). Pure. */
export function tally(consensus: Consensus, samples: readonly SampleResult[], choices?: readonly string[]): Tally {
  const discarded: Tally['discarded'] = [];
  const byKey = new Map<string, Candidate>();
  for (const s of [...samples].sort((a, b) => a.sample - b.sample)) {
    if (s.error !== undefined || s.next === undefined) {
      discarded.push({ sample: s.sample, why: `the sample failed: ${sampleError(s.error)}` });
      continue;
    }
    const value = consensus.vote === undefined ? null : (s.fields?.[consensus.vote] ?? null);
    if (choices && value !== null && value !== '' && !choices.includes(String(value))) {
      discarded.push({
        sample: s.sample,
        why: `${consensus.vote} ${JSON.stringify(value)} is not one of ${choices.join(', ')}`,
      });
      continue;
    }
    const key = JSON.stringify([s.next, value]);
    const seen = byKey.get(key);
    if (seen) {
      seen.count++;
      if (colder(s, seen.coldest) < 0) seen.coldest = s;
    } else byKey.set(key, { next: s.next, value, count: 1, coldest: s });
  }
  const ranking = [...byKey.values()].sort((a, b) => b.count - a.count || colder(a.coldest, b.coldest));
  const remaining = Math.max(0, consensus.samples - samples.length);
  const [leader, runnerUp] = ranking;
  const decided = leader !== undefined && leader.count > (runnerUp?.count ?? 0) + remaining;
  return {
    ranking,
    taken: samples.length,
    remaining,
    discarded,
    decided: decided || (remaining === 0 && leader !== undefined),
  };
}

/** What a consensus step's output records of the vote (the execution history shows it; the state does not keep it). */
export interface ConsensusSummary {
  samples: number;
  discarded: Tally['discarded'];
  votes: { next: string; value: unknown; count: number }[];
  /** Stopped before every sample was taken. */
  earlyExit: boolean;
}

/** What the step handler does for a consensus phase: answer the Map or the tally directly, or record the vote as the step's result. */
export type ConsensusPhase = { reply: unknown } | { result: StepResult; summary: ConsensusSummary };

/**
 * The consensus phase of a step invocation, or undefined for a plain one. `run(temperature)` runs
 * the step once (one sample).
 * @throws InvalidModelOutputError when every sample was discarded (the ASL Catch takes the fallback).
 */
export async function consensusPhase(
  def: WorkflowDefinition,
  step: StepDefinition,
  input: StepInput & ConsensusInput,
  run: (temperature: number) => Promise<StepResult>,
): Promise<ConsensusPhase | undefined> {
  const consensus = step.consensus;
  if (!consensus || (!input.sample && !input.consensus)) return undefined;
  if (input.sample) {
    const { next, reason, decidedBy, fields, usage } = await run(input.sample.temperature);
    return { reply: { ...input.sample, next, reason, decidedBy, fields, usage } satisfies SampleResult };
  }
  const samples = Object.values(input.consensus!.votes).flat();
  const counted = tally(consensus, samples, consensusChoices(def, consensus));
  const summary: ConsensusSummary = {
    samples: counted.taken,
    discarded: counted.discarded,
    votes: counted.ranking.map(({ next, value, count }) => ({ next, value, count })),
    earlyExit: counted.remaining > 0,
  };
  if (!input.consensus!.final) return { reply: { decided: counted.decided, ...summary } };
  const winner = counted.ranking[0];
  if (!winner)
    throw new InvalidModelOutputError(
      `${step.name}: no valid sample among ${counted.taken} (${discardedSummary(counted.discarded)})`,
    );
  const { coldest } = winner;
  const shown =
    consensus.vote === undefined || winner.value === null
      ? winner.next
      : `${winner.next} with ${consensus.vote} ${JSON.stringify(winner.value)}`;
  const result: StepResult = {
    next: winner.next,
    reason: `${coldest.reason ?? 'no reason given'} (consensus: ${shown} by ${winner.count} of ${counted.taken} samples)`,
    decidedBy: coldest.decidedBy ?? 'model',
    fields: coldest.fields ?? {},
    toolCalls: [],
    // Every sample's model use: what the step cost.
    usage: sumUsage(samples.map((s) => s.usage)),
  };
  return { result, summary };
}
