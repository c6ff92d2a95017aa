/**
 * Deterministic rule expressions in CEL (the Common Expression Language), through
 * `@marcbachmann/cel-js`: a maintained, dependency-free evaluator of a non-Turing-complete
 * language. Expressions are parsed, never executed as JavaScript (no `eval`, no `Function`), so a
 * rule file can be edited by people who may not ship code.
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { StepwiseError } from './errors.ts';

// cel-js is about 85 KB of every Lambda bundle. A function whose workflow compiles no expression (no guard rule of
// type `expression`, no `compileExpression` in its code) is bundled with STEPWISE_CEL "off" (`BundleOptions.cel`,
// src/cdk/constructs/stepwise-function.ts): esbuild folds the condition and leaves cel-js out. Run from source, it is
// always loaded.
const cel = process.env.STEPWISE_CEL === 'off' ? undefined : await import('@marcbachmann/cel-js');

/** A rule expression does not parse. Permanent: the definition file is wrong. */
export class ExpressionError extends StepwiseError {}

/**
 * An expression was to be compiled in a function bundled without CEL: synth decided the workflow needs none, and it
 * does. Permanent: no check is skipped; synth again (see `celInBundle`) or say so with the bundle option `cel`.
 */
export class ExpressionsNotBundledError extends StepwiseError {}

/** A parsed expression: evaluate it many times, see which variables it reads. */
export interface CompiledExpression {
  source: string;
  /** Dotted variable paths the expression reads (`response.max_amount`, `profile.country`). */
  variables: string[];
  /** `true`/`false`, or a problem (an unknown variable, a non-boolean result): the caller decides how to treat it. */
  test(variables: Record<string, unknown>): { value: boolean } | { problem: string };
}

const cache = new Map<string, CompiledExpression>();

/** The dotted path a node names (`a`, `a.b.c`), or undefined when it is not a plain selection chain. */
function pathOf(node: ASTNode): string | undefined {
  if (node.op === 'id') return node.args as string;
  if (node.op !== '.' && node.op !== '.?') return undefined;
  const [object, field] = node.args as [ASTNode, string];
  const base = pathOf(object);
  return base === undefined ? undefined : `${base}.${field}`;
}

/** Dotted paths of the variables an expression reads, the deepest selection only. */
function readPaths(node: ASTNode, into: Set<string>): void {
  const whole = pathOf(node);
  if (whole !== undefined) {
    into.add(whole);
    return;
  }
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object' && 'op' in value) readPaths(value as ASTNode, into);
  };
  visit(node.args);
}

/**
 * Parse a CEL expression once (cached by source).
 * @throws ExpressionError when it does not parse; ExpressionsNotBundledError in a bundle built without CEL.
 * @example
 * compileExpression('response.max_amount <= 50').test({ response: { max_amount: 75 } }) // { value: false }
 */
export function compileExpression(source: string): CompiledExpression {
  const hit = cache.get(source);
  if (hit) return hit;
  if (!cel)
    throw new ExpressionsNotBundledError(
      `${source}: this function was bundled without the CEL evaluator (synth found no guard rule of type expression and no compileExpression in the workflow's code)`,
    );
  let program: ReturnType<typeof cel.parse>;
  try {
    program = cel.parse(source);
  } catch (e) {
    throw new ExpressionError(`${source}: ${(e as Error).message.split('\n')[0]}`);
  }
  const paths = new Set<string>();
  readPaths(program.ast, paths);
  const compiled: CompiledExpression = {
    source,
    variables: [...paths].sort(),
    test(variables) {
      try {
        const value: unknown = program(variables);
        return typeof value === 'boolean'
          ? { value }
          : { problem: `the expression gave ${typeof value}, not a boolean` };
      } catch (e) {
        return { problem: (e as Error).message.split('\n')[0]! };
      }
    },
  };
  cache.set(source, compiled);
  return compiled;
}
