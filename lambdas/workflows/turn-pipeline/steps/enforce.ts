import type { ToolCallRecord } from 'stepwise';
import { compileExpression, defineCodeStep, NO_USAGE } from 'stepwise';
import { enforce, enforcementVariables, type JudgeReport } from '../pipeline.ts';
import { resolveVariables, sessionVariablesRead } from '../resolver.ts';
import { contentWords, toolSimilarity } from '../similarity.ts';
import { profileUpdate, readTurn } from '../turn.ts';

/**
 * The judge step's reports, from its own fields only (never a stale `data.verdicts` of an earlier
 * attempt): one per model of its panel (`models`), else the one `verdicts` it gave, else none.
 */
function judgeReports(previous: { step: string | null; fields: Record<string, unknown> }): JudgeReport[] {
  if (previous.step !== '08-judge') return [];
  const panel = previous.fields.panel as { model: string; fields: Record<string, unknown> }[] | undefined;
  if (panel) return panel.map((p) => ({ model: p.model, verdicts: p.fields.verdicts }));
  return previous.fields.verdicts === undefined ? [] : [{ model: 'judge', verdicts: previous.fields.verdicts }];
}

/**
 * 09: two-lane enforcement of the response step 07 wrote (lane 2's verdicts come from step 08).
 * A violation sends the turn back to generation with the violations in the state, up to
 * `max_retries` times; then the fallback template is sent. Every attempt's verdicts are kept in
 * `enforcement` (and so in the event log).
 */
export default defineCodeStep(async ({ def, input, toolbox, tool }) => {
  const turn = readTurn(def, input);
  const { agent } = turn;
  const response = String(turn.data.response ?? '');
  const attempt = Number(turn.data.attempt ?? 0);
  const profile = { ...turn.session.profile, ...profileUpdate(agent.profileFields, turn.context.entities) };
  // The resolver fills what the enforced expressions read under `session.` and no tool set this
  // turn, from the message's entities and the profile, before any expression is evaluated.
  const read = turn.selection!.enforce.flatMap((id) => {
    const expression = agent.rules.find((r) => r.id === id)?.enforcement_expression;
    return expression ? sessionVariablesRead(compileExpression(expression).variables) : [];
  });
  const { resolved } = resolveVariables(read, [turn.variables, turn.context.entities, profile]);
  const variables = enforcementVariables(profile, { ...turn.variables, ...resolved }, response);
  // A short answer ("yes please") is relevant to the question it answers: the query includes the agent's last message.
  const asked = turn.session.history.filter((h) => h.role === 'agent').at(-1)?.text ?? '';
  const query = `${asked}\n${turn.message}`;
  const calls: ToolCallRecord[] = [];
  const relevance = contentWords(query).length
    ? (await toolSimilarity(toolbox, tool, calls).similarity(query, [response]))[0]!
    : null;
  const verdicts = enforce({
    agent,
    enforce: turn.selection!.enforce,
    message: turn.message,
    response,
    variables,
    judges: judgeReports(input.previous),
    relevance,
  });
  const failed = verdicts.filter((v) => !v.passed);
  const history = [
    ...((turn.data.enforcement as { attempts?: unknown[] } | undefined)?.attempts ?? []),
    { attempt, verdicts },
  ];
  const enforcement = { attempts: history };
  const base = { decidedBy: 'code' as const, toolCalls: calls, usage: NO_USAGE };
  if (failed.length === 0)
    return {
      ...base,
      next: '10-persist',
      reason: `passed ${verdicts.length} check(s)`,
      fields: { enforcement, reply: response, outcome: 'answered' },
    };
  const broken = failed.map((v) => `${v.check} (${v.lane})`).join(', ');
  if (attempt < agent.enforcement.max_retries)
    return {
      ...base,
      next: '07-generate',
      reason: `violated ${broken}: regenerating (${attempt + 1} of ${agent.enforcement.max_retries})`,
      fields: { enforcement, attempt: attempt + 1, violations: failed.map((v) => `${v.check}: ${v.message}`) },
    };
  return {
    ...base,
    next: '10-persist',
    reason: `violated ${broken} after ${attempt} regeneration(s): fallback sent`,
    fields: { enforcement, reply: agent.enforcement.fallback_template, outcome: 'fallback' },
  };
});
