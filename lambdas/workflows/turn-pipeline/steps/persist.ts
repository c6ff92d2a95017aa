import { defineCodeStep, NO_USAGE } from 'stepwise';
import { stepKey } from '../pipeline.ts';
import { EPISODES_KEPT, episodeOf, HISTORY_TURNS, type Session } from '../session.ts';
import { profileUpdate, readTurn } from '../turn.ts';

/**
 * 10: save what the turn changed (scenario and step, variables, profile, rule fires,
 * clarification counts, history, the turn as a memory episode) and release the session; the reply is the turn's output.
 */
export default defineCodeStep(async ({ def, input, toolbox, tool }) => {
  const turn = readTurn(def, input);
  const { session, navigation: nav, selection } = turn;
  const reply = String(turn.data.reply);
  const outcome = String(turn.data.outcome);
  const number = session.turn + 1;
  const ruleFires = { ...session.ruleFires };
  for (const id of outcome === 'answered' || outcome === 'fallback' ? (selection?.matched ?? []) : [])
    ruleFires[id] = { count: (ruleFires[id]?.count ?? 0) + 1, lastTurn: number };
  const moved = nav !== undefined && (nav.scenario !== session.activeScenario || nav.step !== session.activeStep);
  const clarifications = moved ? {} : { ...session.clarifications };
  if (nav && (nav.action === 'clarify' || nav.action === 'escalate'))
    clarifications[stepKey(nav.scenario, nav.step)] = nav.clarifications;
  const next: Session = {
    ...session,
    turn: number,
    activeScenario: nav ? nav.scenario : session.activeScenario,
    activeStep: nav ? nav.step : session.activeStep,
    variables: turn.variables,
    profile: { ...session.profile, ...profileUpdate(turn.agent.profileFields, turn.context.entities) },
    ruleFires,
    clarifications,
    history: [
      ...session.history,
      { role: 'user' as const, text: turn.message },
      { role: 'agent' as const, text: reply },
    ].slice(-2 * HISTORY_TURNS),
    episodes: [
      ...session.episodes,
      episodeOf(number, nav ? nav.scenario : session.activeScenario, turn.message, reply),
    ].slice(-EPISODES_KEPT),
    escalated: session.escalated || outcome === 'escalated',
  };
  const call = await toolbox.execute(
    'session_store',
    { op: 'commit', sessionId: session.sessionId, session: next },
    tool,
  );
  if (call.error !== undefined)
    return {
      next: '11-handoff',
      reason: call.error,
      decidedBy: 'code',
      fields: { outcome: 'session-conflict' },
      toolCalls: [call],
      usage: NO_USAGE,
    };
  return {
    next: 'DONE',
    reason: `Turn ${number} saved (${outcome}; scenario ${next.activeScenario ?? 'none'}${next.activeStep ? `/${next.activeStep}` : ''})`,
    decidedBy: 'code',
    fields: {
      reply,
      outcome,
      scenario: next.activeScenario,
      scenarioStep: next.activeStep,
      turn: number,
      intent: turn.context.detectedIntent ?? 'none',
      profileSchemaVersion: next.profileSchemaVersion,
    },
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
