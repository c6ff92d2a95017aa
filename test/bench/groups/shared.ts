/** What the benchmark groups share. */

/** The environment every group synthesizes and runs. */
export const ENV = 'dev';

/** The lifecycle the lifecycle groups run: the lead example. */
export const LEAD_LIFECYCLE = 'lead-lifecycle';

/**
 * Pure calls add their results here: a write to a live object the JIT must keep, so it cannot drop
 * the work being timed.
 */
export const sink = { total: 0 };
