import { defineCodeStep, NO_USAGE } from 'stepwise';
import { GROUNDING, GROUNDING_ACTION, navigate, selectRules } from '../pipeline.ts';
import { readTurn } from '../turn.ts';

/**
 * 05: scenario navigation with stickiness, then the rules that apply where the turn lands and
 * those enforcement checks. Routes to a clarification, an escalation, or on to the tools.
 */
export default defineCodeStep(async ({ def, input }) => {
  const turn = readTurn(def, input);
  const { agent } = turn;
  const navigation = navigate(agent.scenarioFilter, agent.scenarios, turn.session, turn.retrieval!);
  const base = { decidedBy: 'code' as const, toolCalls: [], usage: NO_USAGE };
  if (navigation.action === 'clarify')
    return { ...base, next: '03-clarify', reason: navigation.reason, fields: { navigation } };
  if (navigation.action === 'escalate')
    return {
      ...base,
      next: '10-persist',
      reason: navigation.reason,
      fields: { navigation, reply: agent.scenarioFilter.escalation_message, outcome: 'escalated' },
    };
  const selection = selectRules(
    agent,
    turn.session,
    turn.retrieval!,
    navigation,
    agent.enforcement.always_enforce_global,
  );
  const rule = (id: string) => agent.rules.find((r) => r.id === id)!;
  const step = agent.scenarios.find((s) => s.id === navigation.scenario)?.steps.find((s) => s.id === navigation.step);
  // What generation follows (matched rules' action_text, the step) and what the judge checks (enforced rules without an
  // expression).
  const guidance = {
    scenario: navigation.scenario,
    step: navigation.step,
    instruction: step?.instruction ?? null,
    say: step?.say ?? null,
    rules: selection.matched.map((id) => ({ id, action: rule(id).action_text })),
    judge: agent.enforcement.llm_judge_enabled
      ? [
          ...selection.enforce
            .filter((id) => !rule(id).enforcement_expression)
            .map((id) => ({ id, action: rule(id).action_text })),
          ...(agent.enforcement.grounding_check_enabled ? [{ id: GROUNDING, action: GROUNDING_ACTION }] : []),
        ]
      : [],
  };
  return {
    ...base,
    // The LLM rule filter decides among matched rules; with none matched there is nothing to decide.
    next: agent.scenarioFilter.llm_rule_filter && selection.matched.length ? '05a-rule-filter' : '06-run-tools',
    reason: `${navigation.reason}; ${selection.matched.length} rule(s) apply${selection.suppressed.length ? `, ${selection.suppressed.map((s) => s.id).join(', ')} held back` : ''}`,
    fields: { navigation, selection, guidance },
  };
});
