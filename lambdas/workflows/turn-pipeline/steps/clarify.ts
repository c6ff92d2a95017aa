import { defineCodeStep, NO_USAGE } from 'stepwise';
import { readTurn } from '../turn.ts';

/**
 * 03: ask instead of guessing. Reached straight from extraction when the message is ambiguous
 * (before any retrieval), or from filtering when a step's question got no usable answer.
 */
export default defineCodeStep(async ({ def, input }) => {
  const turn = readTurn(def, input);
  if (input.previous.step === '02-extract-context' || input.previous.step === '04-retrieve') {
    const reason = turn.context.ambiguityReason ?? 'Could you tell me a bit more about what you need?';
    return {
      next: '10-persist',
      reason: `Ambiguous message: asked before retrieval${input.previous.step === '04-retrieve' ? ` (${input.previous.reason})` : ''}`,
      decidedBy: 'code',
      fields: { reply: `I want to make sure I understand. ${reason}`, outcome: 'clarify-ambiguous' },
      toolCalls: [],
      usage: NO_USAGE,
    };
  }
  const nav = turn.navigation!;
  const step = turn.agent.scenarios.find((s) => s.id === nav.scenario)?.steps.find((s) => s.id === nav.step);
  const reply = `${turn.agent.scenarioFilter.clarification_prefix} ${step?.say ?? ''}`.trim();
  return {
    next: '10-persist',
    reason: nav.reason,
    decidedBy: 'code',
    fields: { reply, outcome: 'clarify-step' },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
