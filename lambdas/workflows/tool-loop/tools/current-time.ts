import { defineTool } from 'stepwise';
import * as z from 'zod';

class UnknownTimezoneError extends Error {
  override name = 'UnknownTimezoneError';
}

/** The clock tool: the toolbox's clock (`ctx.now`, pinned by tests and evals) in an IANA timezone. */
export default defineTool({
  name: 'current_time',
  description:
    'The current date and time in an IANA timezone (Europe/Paris, America/New_York); UTC when none is given.',
  input: z.strictObject({
    timezone: z.string().trim().min(1).max(64).optional().describe('An IANA timezone, e.g. Asia/Tokyo.'),
  }),
  async run({ timezone }, ctx) {
    const zone = timezone ?? 'UTC';
    let format: Intl.DateTimeFormat;
    try {
      format = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'full', timeStyle: 'short' });
    } catch {
      throw new UnknownTimezoneError(`unknown timezone "${zone}" (an IANA name such as Europe/Paris)`);
    }
    const now = ctx.now();
    return {
      timezone: zone,
      iso: now.toISOString(),
      local: format.format(now),
      text: `${format.format(now)} in ${zone}`,
      // Carried forward by the loop: later selections and answers should not assume a local time.
      ...(timezone === undefined && { reminder: 'No timezone was given: times are in UTC unless the user names one.' }),
    };
  },
});
