import type { ToolCallRecord } from 'stepwise';
import { defineCodeStep, NO_USAGE } from 'stepwise';
import { applyRuleFilter } from '../pipeline.ts';
import { profileUpdate, readTurn } from '../turn.ts';

/**
 * 06: run the tools attached to the matched rules; their outputs become session variables.
 * Arguments are filled by name from the turn's entities, then the session variables, then the
 * profile; a tool whose arguments are not all known is skipped (generation asks for them).
 */
export default defineCodeStep(async ({ def, input, toolbox, tool }) => {
  const turn = readTurn(def, input);
  // After 05a-rule-filter: only the rules it kept run their tools and guide generation.
  const filtered =
    input.previous.step === '05a-rule-filter'
      ? applyRuleFilter(turn.selection!, turn.data.applies)
      : { selection: turn.selection!, dropped: [] };
  const { selection } = filtered;
  const guidance = turn.data.guidance as { rules: { id: string }[] } & Record<string, unknown>;
  const tools = [
    ...new Set(selection.matched.flatMap((id) => turn.agent.rules.find((r) => r.id === id)!.attached_tool_ids)),
  ];
  const known: Record<string, unknown> = {
    ...turn.session.profile,
    ...profileUpdate(turn.agent.profileFields, turn.context.entities),
    ...turn.session.variables,
    ...turn.context.entities,
  };
  const variables = { ...turn.session.variables };
  const calls: ToolCallRecord[] = [];
  const skipped: string[] = [];
  for (const name of tools) {
    const spec = toolbox.spec(name);
    const keys = spec ? Object.keys(spec.input.shape) : [];
    const args = Object.fromEntries(
      keys.filter((k) => known[k] !== undefined && known[k] !== null).map((k) => [k, known[k]]),
    );
    if (!spec?.input.safeParse(args).success) {
      skipped.push(name);
      continue;
    }
    const call = await toolbox.execute(name, args, tool);
    calls.push(call);
    if (call.error === undefined) Object.assign(variables, call.result as Record<string, unknown>);
  }
  const ran = calls.map((c) => `${c.tool}${c.error === undefined ? '' : ' (failed)'}`);
  return {
    next: '07-generate',
    reason: `${ran.length ? `ran ${ran.join(', ')}` : 'no tools to run'}${skipped.length ? `; skipped ${skipped.join(', ')} (arguments unknown)` : ''}${filtered.dropped.length ? `; the rule filter dropped ${filtered.dropped.join(', ')}` : ''}`,
    decidedBy: 'code',
    fields: {
      variables,
      ...(filtered.dropped.length && {
        selection,
        guidance: { ...guidance, rules: guidance.rules.filter((r) => !filtered.dropped.includes(r.id)) },
      }),
    },
    toolCalls: calls,
    usage: NO_USAGE,
  };
});
