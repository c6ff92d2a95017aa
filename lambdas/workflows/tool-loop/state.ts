/**
 * The tool loop's working state, as it travels in the step data.
 * Code steps read it with these schemas: the data was written by earlier steps, partly by a model.
 */
import type { WorkflowDefinition } from 'stepwise';
import * as z from 'zod';

/** One tool run of a group. */
export const ToolEventSchema = z.object({
  id: z.string(),
  toolName: z.string(),
  args: z.record(z.string(), z.unknown()),
  result: z.unknown().optional(),
  success: z.boolean(),
  error: z.string().optional(),
  timestamp: z.string(),
  groupId: z.string(),
  iteration: z.number().int(),
});
export type ToolEvent = z.infer<typeof ToolEventSchema>;

/** A prerequisite or caveat a tool result asks later iterations (and turns) to keep in mind. */
export const ReminderSchema = z.object({ toolName: z.string(), reason: z.string(), sourceToolEventId: z.string() });
export type Reminder = z.infer<typeof ReminderSchema>;

/** Where a turn's query came from: typed, or transcribed from speech. */
export const InputSourceSchema = z.enum(['text', 'voice']);

/**
 * The loop's fields of `data` (the turn's working state), as far as code steps rely on them.
 * `iteration` mirrors the ASL counter (`$.counters.iteration`, which is what caps the loop) as of
 * the last tool run, so the caller and the next steps read the working state in one place.
 */
export const LoopDataSchema = z.looseObject({
  turnId: z.string(),
  groupId: z.string(),
  inputSource: InputSourceSchema.default('text'),
  iteration: z.number().int().min(0).optional(),
  maxIterations: z.number().int().min(1).optional(),
  currentTool: z.string().optional(),
  originalQuery: z.string(),
  remainingQuery: z.string(),
  groupToolResults: z.array(ToolEventSchema).default([]),
  reminders: z.array(ReminderSchema).default([]),
  selectedTool: z.string().optional(),
  toolArgs: z.record(z.string(), z.unknown()).optional(),
  groupSummary: z.string().optional(),
  action: z.enum(['continue', 'done', 'ask']).optional(),
  summary: z.string().optional(),
  question: z.string().optional(),
});
export type LoopData = z.infer<typeof LoopDataSchema>;

/** What a turn leaves for the next one (`previousResponse`): kept by the session, or passed by the caller. */
export const PreviousResponseSchema = z.looseObject({
  groupId: z.string().optional(),
  turnId: z.string().optional(),
  branch: z.enum(['done', 'ask', 'limit', 'failed']).optional(),
  originalQuery: z.string().optional(),
  reminders: z.array(ReminderSchema).optional(),
  response: z.string().optional(),
  stateSummary: z.string().optional(),
});
export type PreviousResponse = z.infer<typeof PreviousResponseSchema>;

/** The execution input (already checked against the manifest's JSON Schema). */
export const TurnInputSchema = z.looseObject({
  query: z.string().min(1),
  sessionId: z.string().optional(),
  turnId: z.string().optional(),
  inputSource: InputSourceSchema.default('text'),
  previousResponse: PreviousResponseSchema.optional(),
});

/** The iteration cap of a group: the manifest's `iteration` counter. */
export const maxIterations = (def: WorkflowDefinition): number => def.manifest.counters.iteration?.max ?? 0;

/**
 * The turn's `stateSummary`: the working state of the turn's group in one line (group, iterations,
 * tools run, what is left, reminders), for the caller and the next turn.
 */
export function stateSummary(data: Partial<LoopData>, iteration: number | undefined, maxIterations: number): string {
  const events = data.groupToolResults ?? [];
  const tools = events.map((e) => `${e.toolName} ${e.success ? 'ok' : 'failed'}`).join(', ');
  return [
    `group ${data.groupId ?? '(none)'}`,
    `iteration ${iteration ?? events.length} of ${maxIterations}`,
    `tools: ${tools || 'none'}`,
    ...(data.action === 'continue' && data.remainingQuery ? [`remaining: ${data.remainingQuery}`] : []),
    ...(data.reminders?.length ? [`reminders: ${data.reminders.map((r) => r.reason).join(' | ')}`] : []),
  ].join('; ');
}

/** One line per successful tool event: what the group has achieved (the partial summary at the iteration cap). */
export const groupSummary = (events: readonly ToolEvent[]): string =>
  events
    .flatMap((e) =>
      e.success && typeof (e.result as { text?: unknown })?.text === 'string'
        ? [(e.result as { text: string }).text]
        : [],
    )
    .join('; ');
