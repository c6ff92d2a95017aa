import jsep, { type Expression } from 'jsep';
import { defineTool } from 'stepwise';
import * as z from 'zod';

/** What an expression may call or name: a few functions (mathjs' meanings) and constants. */
const FUNCTIONS: Readonly<Record<string, (...args: number[]) => number>> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  // Halves away from zero, as a calculator does (Math.round(-2.5) is -2).
  round: (x) => Math.sign(x) * Math.round(Math.abs(x)),
  floor: Math.floor,
  ceil: Math.ceil,
  min: Math.min,
  max: Math.max,
  pow: Math.pow,
  log: (x, base) => (base === undefined ? Math.log(x) : Math.log(x) / Math.log(base)),
  exp: Math.exp,
};
const CONSTANTS: Readonly<Record<string, number>> = { pi: Math.PI, e: Math.E };
const BINARY: Readonly<Record<string, (a: number, b: number) => number>> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
  '**': (a, b) => a ** b,
};

class UnsupportedExpressionError extends Error {
  override name = 'UnsupportedExpressionError';
}

const unsupported = (node: Expression) =>
  new UnsupportedExpressionError(`only arithmetic is supported, not ${node.type}`);

/**
 * Evaluate the syntax tree, refusing any node that is not arithmetic: jsep parses JavaScript
 * expressions (members, strings, arrays, `this`), and nothing but numbers, + - * / ^, unary signs,
 * parentheses and the functions and constants above is evaluated.
 */
function evaluate(node: Expression): number {
  switch (node.type) {
    case 'Literal':
      if (typeof node.value !== 'number') throw unsupported(node);
      return node.value;
    case 'Identifier': {
      const name = node.name as string;
      if (!Object.hasOwn(CONSTANTS, name)) throw new UnsupportedExpressionError(`unknown name "${name}"`);
      return CONSTANTS[name]!;
    }
    case 'UnaryExpression':
      if (node.operator === '-') return -evaluate(node.argument as Expression);
      if (node.operator === '+') return evaluate(node.argument as Expression);
      throw unsupported(node);
    case 'BinaryExpression': {
      const op = node.operator as string;
      const left = node.left as Expression;
      // jsep binds a sign tighter than a power; in arithmetic -2^2 is -(2^2).
      if (op === '**' && left.type === 'UnaryExpression' && (left.operator === '-' || left.operator === '+'))
        return evaluate({ ...left, argument: { ...node, left: left.argument as Expression } });
      if (!Object.hasOwn(BINARY, op)) throw new UnsupportedExpressionError(`unsupported operator "${op}"`);
      return BINARY[op]!(evaluate(left), evaluate(node.right as Expression));
    }
    case 'CallExpression': {
      const callee = node.callee as Expression;
      const name = callee.type === 'Identifier' ? (callee.name as string) : '';
      if (!Object.hasOwn(FUNCTIONS, name))
        throw new UnsupportedExpressionError(`unknown function "${name || callee.type}"`);
      return FUNCTIONS[name]!(...(node.arguments as Expression[]).map(evaluate));
    }
    default:
      throw unsupported(node);
  }
}

/** Evaluate an arithmetic expression (`^` is a power) by walking jsep's syntax tree: never JavaScript `eval`. */
export function calculate(expression: string): number {
  const value = evaluate(jsep(expression.replaceAll('^', '**')));
  if (!Number.isFinite(value)) throw new UnsupportedExpressionError(`the result is not a finite number`);
  return value;
}

export default defineTool({
  name: 'calculate',
  description:
    'Evaluate an arithmetic expression: numbers, + - * / ^, parentheses, sqrt, abs, round, floor, ceil, min, max, pow, log, exp, pi, e.',
  input: z.strictObject({
    expression: z.string().trim().min(1).max(200).describe('The expression, e.g. 12 * (3 + 4).'),
  }),
  async run({ expression }) {
    const value = calculate(expression);
    // Binary floating point: show 12 significant digits, keep the exact value too.
    const shown = Number(value.toPrecision(12));
    return { expression, value, text: `${expression} = ${shown}` };
  },
});
