import type { ToolCallRecord } from 'stepwise';
import { defineCodeStep, NO_USAGE } from 'stepwise';
import { applyRuleFilter } from '../pipeline.ts';
import { requiredArguments, resolveVariables } from '../resolver.ts';
import { profileUpdate, readTurn } from '../turn.ts';

/**
 * 06: run the tools attached to the matched rules; their outputs become session variables.
 * The variable resolver fills each tool's arguments by name from the turn's entities, then the
 * session variables, then the profile; a tool with a required argument none of them holds does
 * not run, and the argument goes to generation as `missing`, which asks the user for it.
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
  const sources = [
    turn.context.entities,
    turn.session.variables,
    { ...turn.session.profile, ...profileUpdate(turn.agent.profileFields, turn.context.entities) },
  ];
  const variables = { ...turn.session.variables };
  const calls: ToolCallRecord[] = [];
  const skipped: string[] = [];
  const missing = new Set<string>();
  for (const name of tools) {
    const spec = toolbox.spec(name);
    if (!spec) {
      skipped.push(name);
      continue;
    }
    const { resolved, stillMissing } = resolveVariables(Object.keys(spec.input.shape), sources);
    const absent = stillMissing.filter((k) => requiredArguments(spec.input).includes(k));
    // A known value the tool refuses (an order id of the wrong form) is as good as missing: the user is asked again.
    const invalid = absent.length ? [] : spec.input.safeParse(resolved).error?.issues.map((i) => String(i.path[0]));
    if (absent.length || invalid?.length) {
      skipped.push(name);
      for (const k of [...absent, ...(invalid ?? [])]) missing.add(k);
      continue;
    }
    const args = resolved;
    const call = await toolbox.execute(name, args, tool);
    calls.push(call);
    if (call.error === undefined) Object.assign(variables, call.result as Record<string, unknown>);
  }
  const ran = calls.map((c) => `${c.tool}${c.error === undefined ? '' : ' (failed)'}`);
  return {
    next: '07-generate',
    reason: `${ran.length ? `ran ${ran.join(', ')}` : 'no tools to run'}${skipped.length ? `; skipped ${skipped.join(', ')} (missing ${[...missing].join(', ')}: generation asks)` : ''}${filtered.dropped.length ? `; the rule filter dropped ${filtered.dropped.join(', ')}` : ''}`,
    decidedBy: 'code',
    fields: {
      variables,
      missing: [...missing],
      ...(filtered.dropped.length && {
        selection,
        guidance: { ...guidance, rules: guidance.rules.filter((r) => !filtered.dropped.includes(r.id)) },
      }),
    },
    toolCalls: calls,
    usage: NO_USAGE,
  };
});
