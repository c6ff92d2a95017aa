import { isDeepStrictEqual } from 'node:util';
import { ToolInputError, ToolNotAllowedError } from '../../core/errors.ts';
import { lookup } from '../../core/template.ts';
import type { StepDefinition } from '../../definitions/workflow/schema.ts';
import { refusedArgs } from '../tools/refusals.ts';
import type { Toolbox } from '../tools/types.ts';

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
        args: refusedArgs(args),
        error: `${ToolNotAllowedError.name}: tool "${name}" is not allowed in step ${step.name} (allowed: ${[...allowed].join(', ') || 'none'})`,
      };
    },
  };
}

/** Where bound arguments are read: `data.*` (earlier steps) and `input.*` (the execution input). */
export interface BindingScope {
  data: Record<string, unknown>;
  input: Record<string, unknown>;
}

/**
 * The step's toolbox with its frontmatter `bind` applied: a bound argument disappears from the
 * tool's schema (the model never sees it), the engine fills it from state, and a call that sets it
 * anyway is refused, whatever the value. A bound path without a value refuses the call too: the
 * tool never runs on a guess.
 */
export function withBoundArgs(
  toolbox: Toolbox,
  step: Pick<StepDefinition, 'name' | 'bind'>,
  scope: BindingScope,
): Toolbox {
  const refuse = (name: string, args: unknown, why: string) => ({
    tool: name,
    args: refusedArgs(args),
    error: `${ToolInputError.name}: ${why}`,
  });
  return {
    spec(name) {
      const spec = toolbox.spec(name);
      const bound = step.bind[name];
      if (!spec || !bound) return spec;
      return {
        ...spec,
        input: spec.input.omit(
          Object.fromEntries(Object.keys(bound).map((k) => [k, true])) as Record<string, true> & Record<number, never>,
        ),
      };
    },
    async execute(name, args, ctx) {
      const bound = step.bind[name];
      if (!bound) return toolbox.execute(name, args, ctx);
      const given =
        typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      const filled: Record<string, unknown> = {};
      for (const [arg, path] of Object.entries(bound)) {
        const value = lookup(scope, path);
        if (Object.hasOwn(given, arg)) {
          const same = isDeepStrictEqual(given[arg], value) ? ' (not even to the same value)' : '';
          return refuse(
            name,
            args,
            `argument "${arg}" is bound from ${path} in step ${step.name}: the caller may not set it${same}`,
          );
        }
        if (value === undefined || value === null)
          return refuse(name, args, `bound argument "${arg}": ${path} has no value`);
        filled[arg] = value;
      }
      return toolbox.execute(name, { ...given, ...filled }, ctx);
    },
  };
}
