import { parse, type MathNode } from 'mathjs';
import { z } from 'zod';
import { defineTool } from '../../../tools/types.ts';

/** What an expression may contain: numbers, + - * / ^ and unary minus, parentheses, a few functions and constants. */
const FUNCTIONS = new Set(['sqrt', 'abs', 'round', 'floor', 'ceil', 'min', 'max', 'pow', 'log', 'exp']);
const CONSTANTS = new Set(['pi', 'e']);
const OPERATORS = new Set(['+', '-', '*', '/', '^']);

class UnsupportedExpressionError extends Error {
  override name = 'UnsupportedExpressionError';
}

/** Refuse anything beyond arithmetic before evaluating: mathjs also parses assignments, units, matrices and strings. */
function checkArithmetic(node: MathNode): void {
  node.traverse((n) => {
    const ok =
      (n.type === 'ConstantNode' && typeof (n as unknown as { value: unknown }).value === 'number') ||
      n.type === 'ParenthesisNode' ||
      (n.type === 'OperatorNode' && OPERATORS.has((n as unknown as { op: string }).op)) ||
      (n.type === 'FunctionNode' && FUNCTIONS.has((n as unknown as { fn: { name: string } }).fn.name)) ||
      (n.type === 'SymbolNode' && (CONSTANTS.has((n as unknown as { name: string }).name) || FUNCTIONS.has((n as unknown as { name: string }).name)));
    if (!ok) throw new UnsupportedExpressionError(`only arithmetic is supported, not ${n.type} "${n.toString()}"`);
  });
}

/** Evaluate an arithmetic expression with mathjs' parser (never JavaScript `eval`). */
export function calculate(expression: string): number {
  const node = parse(expression);
  checkArithmetic(node);
  const value: unknown = node.evaluate();
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new UnsupportedExpressionError(`the result is not a finite number`);
  return value;
}

export default defineTool({
  name: 'calculate',
  description: 'Evaluate an arithmetic expression: numbers, + - * / ^, parentheses, sqrt, abs, round, floor, ceil, min, max, pow, log, exp, pi, e.',
  input: z.strictObject({ expression: z.string().trim().min(1).max(200).describe('The expression, e.g. 12 * (3 + 4).') }),
  async run({ expression }) {
    const value = calculate(expression);
    // Binary floating point: show 12 significant digits, keep the exact value too.
    const shown = Number(value.toPrecision(12));
    return { expression, value, text: `${expression} = ${shown}` };
  },
});
