import { defineCodeStep, NO_USAGE } from 'stepwise';
import { agentDir, loadAgent } from '../agent.ts';
import { SessionBusyError, SessionSchema } from '../session.ts';
import { migrateProfile } from '../turn.ts';

/** 01: read the session and take its lease; a turn of the same session still running is rejected (11-handoff). */
export default defineCodeStep(async ({ def, input, toolbox, tool }) => {
  const sessionId = String(input.input.sessionId);
  const call = await toolbox.execute('session_store', { op: 'begin', sessionId }, tool);
  if (call.error !== undefined) {
    const outcome = call.error.startsWith(`${SessionBusyError.name}:`) ? 'rejected-busy' : 'session-unavailable';
    return {
      next: '11-handoff',
      reason: call.error,
      decidedBy: 'code',
      fields: { outcome },
      toolCalls: [call],
      usage: NO_USAGE,
    };
  }
  const stored = SessionSchema.parse((call.result as { session: unknown }).session);
  // A session saved under an older profile schema is migrated now; the next commit saves it under the current one.
  const agent = loadAgent(agentDir(def.dir), def.manifest.tools);
  const fresh = stored.version === 0;
  const target = fresh ? agent.profileSchemaVersion : Math.max(stored.profileSchemaVersion, agent.profileSchemaVersion);
  const { profile, migrated } = fresh
    ? { profile: stored.profile }
    : migrateProfile(stored.profile, stored.profileSchemaVersion, agent.profileSchemaVersion, agent.profileMigrations);
  const session = { ...stored, profile, profileSchemaVersion: target };
  const note = migrated ? `; profile migrated from schema ${migrated.from} to ${migrated.to}` : '';
  return {
    next: '02-extract-context',
    reason: `Session loaded: turn ${session.turn + 1}, scenario ${session.activeScenario ?? 'none'}${note}`,
    decidedBy: 'code',
    fields: { session, ...(migrated && { profileMigration: migrated }) },
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
