import { ToolInputError } from '../lib/errors.ts';
import { toolSpec } from '../tools/specs.ts';
import type { Toolbox } from '../tools/types.ts';
import type { EvalCase } from './schema.ts';

/**
 * A toolbox that answers with an eval case's `mock_function_responses`. Arguments are validated
 * against the real tool specs (so a case cannot pass with calls the real tools would refuse);
 * `{ error: "..." }` makes a call fail; a tool without a mock fails with a message saying so.
 */
export function mockToolbox(mocks: EvalCase['input']['mock_function_responses']): Toolbox {
  return {
    spec: toolSpec,
    async execute(name, args, _ctx) {
      const given = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      const spec = toolSpec(name);
      if (!spec) return { tool: name, args: given, error: `unknown tool "${name}"` };
      const parsed = spec.input.safeParse(args);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return { tool: name, args: given, error: `${ToolInputError.name}: ${issue.path.join('.') || 'args'}: ${issue.message}` };
      }
      const mock = mocks[name];
      if (mock === undefined) return { tool: name, args: parsed.data, error: `the eval case has no mock response for ${name}` };
      if (Object.keys(mock).length === 1 && typeof mock.error === 'string') return { tool: name, args: parsed.data, error: mock.error };
      return { tool: name, args: parsed.data, result: mock };
    },
  };
}
