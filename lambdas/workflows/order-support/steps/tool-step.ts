import {
  type CodeStep,
  defineCodeStep,
  NO_USAGE,
  StepFailedError,
  type StepInput,
  type ToolCallRecord,
} from 'stepwise';

/**
 * A deterministic step that makes one tool call and routes to its one edge with `fields` read from
 * the result. A call that fails fails the step (its map item, its branch, else the fallback);
 * `args` returning undefined skips the call, and the fields are `skipped`. `route`, when given,
 * picks the edge and its reason from the fields instead (a step with more than one edge).
 */
export function toolStep(
  tool: string,
  args: (input: StepInput) => Record<string, unknown> | undefined,
  fields: (result: Record<string, unknown>) => Record<string, unknown>,
  skipped: Record<string, unknown> = {},
  route?: (values: Record<string, unknown>, next: readonly string[]) => { next: string; reason: string },
): CodeStep {
  return defineCodeStep(async ({ step, input, toolbox, tool: ctx }) => {
    const routed = (reason: string, values: Record<string, unknown>, toolCalls: ToolCallRecord[]) => ({
      next: step.next[0]!,
      reason,
      ...route?.(values, step.next),
      decidedBy: 'code' as const,
      fields: values,
      toolCalls,
      usage: NO_USAGE,
    });
    const given = args(input);
    if (!given) return routed(`${tool} not called: nothing to look up`, skipped, []);
    const call = await toolbox.execute(tool, given, ctx);
    if (call.error !== undefined) throw new StepFailedError(`${tool} failed: ${call.error}`);
    return routed(`${tool} answered`, fields(call.result as Record<string, unknown>), [call]);
  });
}
