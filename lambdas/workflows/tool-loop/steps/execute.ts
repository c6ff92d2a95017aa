import { defineCodeStep, NO_USAGE } from 'stepwise';
import { groupSummary, LoopDataSchema, type Reminder, type ToolEvent } from '../state.ts';

/**
 * Runs the ONE tool `02-select-tool` chose, through the step's toolbox: a tool outside the step's
 * allow-list (an invented name) is refused there and never runs. The call becomes a tool event of
 * this group (failures too: the reflection sees them); a `reminder` in the result is carried forward.
 */
export default defineCodeStep(async ({ input, toolbox, tool }) => {
  const data = LoopDataSchema.parse(input.previous.data);
  const iteration = input.counters?.iteration ?? data.groupToolResults.length + 1;
  const id = `${data.groupId}#${iteration}`;
  const call = data.selectedTool
    ? await toolbox.execute(data.selectedTool, data.toolArgs ?? {}, tool)
    : { tool: '(none)', args: {}, error: 'no tool was selected' };
  const event: ToolEvent = {
    id,
    toolName: call.tool,
    args: call.args,
    ...(call.result !== undefined && { result: call.result }),
    success: call.error === undefined,
    ...(call.error !== undefined && { error: call.error }),
    timestamp: new Date().toISOString(),
    groupId: data.groupId,
    iteration,
  };
  const reminder = (call.result as { reminder?: unknown } | undefined)?.reminder;
  const reminders: Reminder[] =
    typeof reminder === 'string' && !data.reminders.some((r) => r.reason === reminder)
      ? [...data.reminders, { toolName: call.tool, reason: reminder, sourceToolEventId: id }]
      : data.reminders;
  const groupToolResults = [...data.groupToolResults, event];
  return {
    next: '04-reflect',
    reason: event.success ? `${call.tool} succeeded (iteration ${iteration})` : `${call.tool} failed: ${call.error}`,
    decidedBy: 'code',
    fields: {
      groupToolResults,
      reminders,
      groupSummary: groupSummary(groupToolResults),
      iteration,
      currentTool: call.tool,
    },
    toolCalls: data.selectedTool ? [call] : [],
    usage: NO_USAGE,
  };
});
