import type { EvalCase } from '../../definitions/eval-cases.ts';
import type { ToolCallRecord } from '../../runtime/contracts/step.ts';
import { parsedArgs, refusedArgs } from '../../runtime/tools/refusals.ts';
import type { CallContext, Toolbox, ToolDefinition } from '../../runtime/tools/types.ts';

/**
 * A toolbox that answers with an eval case's `mock_function_responses`. Arguments are validated
 * against the workflow's real tool definitions (so a case cannot pass with calls the real tools
 * would refuse); `{ error: "..." }` makes a call fail; a tool without a mock fails with a message
 * saying so, unless the tool declares `evalPorts`: then it runs for real on them.
 */
export function mockToolbox(
  tools: Readonly<Record<string, ToolDefinition>>,
  mocks: EvalCase['input']['mock_function_responses'],
): Toolbox {
  const spec = (name: string) => (Object.hasOwn(tools, name) ? tools[name] : undefined);
  // One set of in-memory ports per toolbox, i.e. per case: its turns share them, other cases do not.
  const ports = new Map<string, unknown>();
  const runOnEvalPorts = async (
    tool: ToolDefinition,
    args: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<ToolCallRecord> => {
    if (!ports.has(tool.name)) ports.set(tool.name, tool.evalPorts!());
    try {
      return {
        tool: tool.name,
        args,
        result: await tool.run(args as never, { ...ctx, now: () => new Date() }, ports.get(tool.name)),
      };
    } catch (e) {
      return { tool: tool.name, args, error: `${(e as Error).name}: ${(e as Error).message}` };
    }
  };
  return {
    spec,
    async execute(name, args, ctx) {
      const tool = spec(name);
      if (!tool) return { tool: name, args: refusedArgs(args), error: `unknown tool "${name}"` };
      const parsed = parsedArgs(name, tool.input, args);
      if (parsed.refused) return parsed.refused;
      const mock = mocks[name];
      if (mock === undefined && tool.evalPorts) return runOnEvalPorts(tool, parsed.args, ctx);
      if (mock === undefined)
        return { tool: name, args: parsed.args, error: `the eval case has no mock response for ${name}` };
      if (Object.keys(mock).length === 1 && typeof mock.error === 'string')
        return { tool: name, args: parsed.args, error: mock.error };
      return { tool: name, args: parsed.args, result: mock };
    },
  };
}
