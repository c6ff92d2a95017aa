import { ToolNotAllowedError } from '../lib/errors.ts';
import type { StepDefinition } from '../lib/workflow/schema.ts';
import type { Toolbox } from '../tools/types.ts';

const asArgs = (args: unknown): Record<string, unknown> =>
  args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : { value: args };

/**
 * The toolbox as one step sees it: only the tools in the step's frontmatter `tools`. A call to any
 * other tool is refused and comes back as a record with an `error`; it never reaches the toolbox.
 */
export function allowListed(toolbox: Toolbox, step: Pick<StepDefinition, 'name' | 'tools'>): Toolbox {
  const allowed = new Set(step.tools);
  return {
    spec: (name) => (allowed.has(name) ? toolbox.spec(name) : undefined),
    async execute(name, args, ctx) {
      if (allowed.has(name)) return toolbox.execute(name, args, ctx);
      return {
        tool: name,
        args: asArgs(args),
        error: `${ToolNotAllowedError.name}: tool "${name}" is not allowed in step ${step.name} (allowed: ${[...allowed].join(', ') || 'none'})`,
      };
    },
  };
}
