/**
 * The per-agent timer config (`timers` in `agents/<agent>.json`): what raises the time-based
 * events (follow-ups, going cold, renewals), which no producer sends. Kept apart from conditions.ts
 * so the timer planner and the config schema share it without a cycle.
 */
import * as z from 'zod';

export const TimersSchema = z
  .object({
    followUpHours: z
      .array(z.number().positive())
      .max(20)
      .default([])
      .describe(
        'Follow-up cadence: follow-up 1 is due this many hours after the entity became able to receive follow-ups (or after its last reply), follow-up n+1 that many hours after follow-up n. The length is the number of follow-ups.',
      ),
    coldAfterDays: z
      .number()
      .positive()
      .nullable()
      .default(null)
      .describe(
        "Days after the last follow-up without a reply before the follow-ups feature's `exhausted` event. `null`: never.",
      ),
    renewalAfterDays: z
      .number()
      .positive()
      .nullable()
      .default(null)
      .describe("Days from entering the renewals feature's state to its event. `null`: no renewals."),
  })
  .strict();
export type TimersConfig = z.infer<typeof TimersSchema>;

/** An agent that declares no timers: nothing time-based happens to its entities. */
export const NO_TIMERS: TimersConfig = { followUpHours: [], coldAfterDays: null, renewalAfterDays: null };
