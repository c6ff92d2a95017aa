/**
 * Waits for outside events, the runtime half. An `event` step's `.waitForTaskToken` Task hands its
 * token to {@link registerWait}, which records it under the correlation key (single use, expiring
 * at the step's deadline). When an event arrives, {@link resumeWaiting} finds the record for the
 * key the event carries, takes it (a conditional delete: of two matching events, one wins) and
 * sends `SendTaskSuccess` with the event's detail. Every event that resumes nothing is recorded
 * with its reason: no waiting execution, after the deadline, already resumed, no key.
 */
import * as z from 'zod';
import { StepwiseError } from '../../../core/errors.ts';
import { type EventWaitRequest, keyText, valueAt } from '../../../definitions/workflow/constructs/event.ts';

/** A second execution tried to wait on a key another one still waits on. Caught to the fallback. */
export class CorrelationKeyTakenError extends StepwiseError {}

/** What an event step waits for, as the resumer is told (its `EVENT_WAITS` setting). */
export const WaitDeclarationSchema = z.object({
  workflow: z.string().min(1),
  step: z.string().min(1),
  source: z.string().min(1),
  detailType: z.string().min(1),
  match: z.string().min(1),
});
export type WaitDeclaration = z.infer<typeof WaitDeclarationSchema>;

/** What the wait Task sends the registering function. */
export const EventWaitRequestSchema = z.object({
  taskToken: z.string().min(1),
  workflow: z.string().min(1),
  step: z.string().min(1),
  execution: z.string().min(1),
  source: z.string().min(1),
  detailType: z.string().min(1),
  match: z.string().min(1),
  key: z.unknown().refine((k) => k !== undefined && k !== null, 'a correlation key'),
  timeoutSeconds: z.number().int().positive(),
}) satisfies z.ZodType<EventWaitRequest>;

/** An EventBridge event as a rule target receives it; the detail is outside input, checked here. */
export const EventEnvelopeSchema = z.object({
  id: z.string().min(1),
  source: z.string().min(1),
  'detail-type': z.string().min(1),
  time: z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'an ISO date'),
  detail: z.record(z.string(), z.unknown()),
});
export type ArrivedEvent = z.infer<typeof EventEnvelopeSchema>;

/** A recorded task token. */
export interface WaitRecord {
  pk: string;
  taskToken: string;
  execution: string;
  /** Epoch seconds: the deadline (and the record's TTL). */
  expiresAt: number;
}

/** Why an event resumed nothing. */
export type UnmatchedReason = 'no-waiting-execution' | 'after-deadline' | 'already-resumed' | 'no-key';

/** What became of an event, for one wait it matched by source and detail-type. */
export type EventOutcome = {
  eventId: string;
  source: string;
  detailType: string;
  step?: string;
  key?: string;
  execution?: string;
} & ({ outcome: 'resumed' } | { outcome: 'unmatched'; reason: UnmatchedReason });

/** The token table. */
export interface WaitTable {
  /** Record a token unless a live record holds the key. @returns false when one does. */
  put(record: WaitRecord, now: Date): Promise<boolean>;
  get(pk: string): Promise<WaitRecord | undefined>;
  /** Delete the record if it still holds this token. @returns false when another taker was first. */
  take(pk: string, taskToken: string): Promise<boolean>;
  /** Keep an event that resumed nothing, with its reason. */
  recordUnmatched(outcome: EventOutcome, event: ArrivedEvent, now: Date): Promise<void>;
}

/** `SendTaskSuccess`. @returns false when the task is gone (timed out, or its execution ended). */
export type SendSuccess = (taskToken: string, output: string) => Promise<boolean>;

/** The record key of a wait: workflow, step and the key's text. */
export const waitKey = (workflow: string, step: string, key: unknown): string =>
  `wait#${workflow}#${step}#${keyText(key)}`;

/**
 * Record the token of a waiting execution under its key, expiring at the deadline.
 * @throws CorrelationKeyTakenError when another execution waits on the same key.
 */
export async function registerWait(request: EventWaitRequest, table: WaitTable, now: Date): Promise<WaitRecord> {
  const record: WaitRecord = {
    pk: waitKey(request.workflow, request.step, request.key),
    taskToken: request.taskToken,
    execution: request.execution,
    expiresAt: Math.floor(now.getTime() / 1000) + request.timeoutSeconds,
  };
  if (!(await table.put(record, now)))
    throw new CorrelationKeyTakenError(
      `${request.step}: another execution already waits on the key ${keyText(request.key)}`,
    );
  return record;
}

/** The waits an event is for, by its source and detail-type. */
export const waitsFor = (event: ArrivedEvent, waits: readonly WaitDeclaration[]): WaitDeclaration[] =>
  waits.filter((w) => w.source === event.source && w.detailType === event['detail-type']);

/**
 * Resume the executions an event is for: one per declared wait it matches; every other outcome is
 * recorded with its reason, so no event is lost.
 */
export async function resumeWaiting(
  event: ArrivedEvent,
  waits: readonly WaitDeclaration[],
  deps: { table: WaitTable; sendSuccess: SendSuccess; now: Date },
): Promise<EventOutcome[]> {
  const base = { eventId: event.id, source: event.source, detailType: event['detail-type'] };
  const matching = waitsFor(event, waits);
  if (!matching.length) {
    const outcome: EventOutcome = { ...base, outcome: 'unmatched', reason: 'no-waiting-execution' };
    await deps.table.recordUnmatched(outcome, event, deps.now);
    return [outcome];
  }
  const outcomes: EventOutcome[] = [];
  for (const wait of matching) {
    const outcome = await resumeOne(event, wait, deps, { ...base, step: wait.step });
    if (outcome.outcome === 'unmatched') await deps.table.recordUnmatched(outcome, event, deps.now);
    outcomes.push(outcome);
  }
  return outcomes;
}

async function resumeOne(
  event: ArrivedEvent,
  wait: WaitDeclaration,
  deps: { table: WaitTable; sendSuccess: SendSuccess; now: Date },
  base: Omit<EventOutcome, 'outcome' | 'reason'>,
): Promise<EventOutcome> {
  const key = valueAt(event.detail, wait.match);
  if (key === undefined || key === null) return { ...base, outcome: 'unmatched', reason: 'no-key' };
  const at = { ...base, key: keyText(key) };
  const record = await deps.table.get(waitKey(wait.workflow, wait.step, key));
  if (!record) return { ...at, outcome: 'unmatched', reason: 'no-waiting-execution' };
  const withExecution = { ...at, execution: record.execution };
  // TTL deletes late: a record past its deadline is expired whether or not it is still there.
  if (record.expiresAt * 1000 <= deps.now.getTime())
    return { ...withExecution, outcome: 'unmatched', reason: 'after-deadline' };
  if (!(await deps.table.take(record.pk, record.taskToken)))
    return { ...withExecution, outcome: 'unmatched', reason: 'already-resumed' };
  if (!(await deps.sendSuccess(record.taskToken, JSON.stringify(event.detail))))
    return { ...withExecution, outcome: 'unmatched', reason: 'after-deadline' };
  return { ...withExecution, outcome: 'resumed' };
}

/** A token table in memory, for tests and the local runtime's bookkeeping. */
export function memoryWaitTable(): WaitTable & { unmatched: EventOutcome[]; records: Map<string, WaitRecord> } {
  const records = new Map<string, WaitRecord>();
  const unmatched: EventOutcome[] = [];
  return {
    records,
    unmatched,
    async put(record, now) {
      const held = records.get(record.pk);
      if (held && held.expiresAt * 1000 > now.getTime()) return false;
      records.set(record.pk, record);
      return true;
    },
    async get(pk) {
      return records.get(pk);
    },
    async take(pk, taskToken) {
      if (records.get(pk)?.taskToken !== taskToken) return false;
      return records.delete(pk);
    },
    async recordUnmatched(outcome) {
      unmatched.push(outcome);
    },
  };
}
