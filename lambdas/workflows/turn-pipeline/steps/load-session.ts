import { NO_USAGE, defineCodeStep } from 'stepwise';
import { SessionBusyError } from '../session.ts';

/** 01: read the session and take its lease; a turn of the same session still running is rejected (11-handoff). */
export default defineCodeStep(async ({ input, toolbox, tool }) => {
  const sessionId = String(input.input.sessionId);
  const call = await toolbox.execute('session_store', { op: 'begin', sessionId }, tool);
  if (call.error !== undefined) {
    const outcome = call.error.startsWith(`${SessionBusyError.name}:`) ? 'rejected-busy' : 'session-unavailable';
    return { next: '11-handoff', reason: call.error, decidedBy: 'code', fields: { outcome }, toolCalls: [call], usage: NO_USAGE };
  }
  const session = (call.result as { session: { turn: number; activeScenario: string | null } }).session;
  return {
    next: '02-extract-context',
    reason: `Session loaded: turn ${session.turn + 1}, scenario ${session.activeScenario ?? 'none'}`,
    decidedBy: 'code',
    fields: { session },
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
