import { defineCodeStep, NO_USAGE } from 'stepwise';

/** Where each registry status leads (the step's declared edges). */
const ROUTES = {
  valid: '03a-valid-warranty',
  expired: '03c-expired-warranty',
  not_found: '03b-device-not-found',
} as const;
/** The registry could not answer: hand the email over (the workflow fallback). */
const UNANSWERED = '04-out-of-scope';

/**
 * Step 02, deterministic: look the serial number from step 01 up with `check_warranty` and route
 * on the status. A missing serial or a refused/failed lookup routes to 04 with `handoff: true`, so
 * the customer is told a person will follow up. Transient outages throw (ASL Retry, then Catch).
 */
export default defineCodeStep(async ({ input, toolbox, tool }) => {
  const serialNumber = input.previous.data.serialNumber;
  if (typeof serialNumber !== 'string' || !serialNumber.trim())
    return {
      next: UNANSWERED,
      reason: 'No serial number in the step data',
      decidedBy: 'code',
      fields: { handoff: true },
      toolCalls: [],
      usage: NO_USAGE,
    };
  const call = await toolbox.execute('check_warranty', { serialNumber }, tool);
  const status = (call.result as { status?: unknown } | undefined)?.status;
  if (call.error !== undefined || typeof status !== 'string' || !(status in ROUTES))
    return {
      next: UNANSWERED,
      reason: `Warranty lookup failed: ${call.error ?? `unexpected status ${JSON.stringify(status)}`}`,
      decidedBy: 'code',
      fields: { handoff: true },
      toolCalls: [call],
      usage: NO_USAGE,
    };
  return {
    next: ROUTES[status as keyof typeof ROUTES],
    reason: `Warranty status: ${status}`,
    decidedBy: 'code',
    fields: { warranty: call.result },
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
