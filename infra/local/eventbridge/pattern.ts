/**
 * EventBridge event patterns (content filtering), as a pure matcher: `compilePattern` validates a
 * pattern once and returns a predicate; `matches` is the one-shot form. Semantics follow the
 * EventBridge user guide ("Content filtering in Amazon EventBridge event patterns", "Comparison
 * operators for use in event patterns") and aws/event-ruler, the library behind it:
 *
 * - keys are ANDed, the values in a field's array are ORed; `$or` ORs whole sub-patterns;
 * - comparison operators apply to leaf values only; an event array matches if any element does,
 *   and all fields of one sub-pattern must match inside the same array element;
 * - `null` and `""` are distinct values; numbers compare by value, never with strings;
 * - `exists: false` matches a missing field and a field that is not a leaf (an object).
 */
import { BlockList, isIP } from 'node:net';
import { InvalidEventPatternError } from '../../../lambdas/lib/errors.ts';

/** A validated pattern as a predicate over whole events. */
export type EventMatcher = (event: unknown) => boolean;

type Scalar = string | number | boolean | null;
/** One entry of a field's array: true when it accepts one leaf value of the event. */
type ValueTest = (value: Scalar) => boolean;

interface FieldNode {
  readonly key: string;
  readonly node: PatternNode;
}
/** A pattern object: fields (AND) and `$or` groups (each: any alternative). */
interface ObjectNode {
  readonly kind: 'object';
  readonly fields: readonly FieldNode[];
  readonly ors: readonly (readonly ObjectNode[])[];
}
/** A field's array of values and operators (OR), plus `exists` checks. */
interface LeafNode {
  readonly kind: 'leaf';
  readonly tests: readonly ValueTest[];
  /** `exists: true` present (matches any leaf value) / `exists: false` present (matches when there is none). */
  readonly existsTrue: boolean;
  readonly existsFalse: boolean;
}
type PatternNode = ObjectNode | LeafNode;

const NUMERIC_LOWER = new Set<unknown>(['>', '>=']);
const NUMERIC_UPPER = new Set<unknown>(['<', '<=']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(path: string, detail: string): never {
  throw new InvalidEventPatternError(`invalid event pattern at ${path || '(root)'}: ${detail}`);
}

function describe(v: unknown): string {
  return v === undefined ? 'undefined' : JSON.stringify(v);
}

function requireString(v: unknown, path: string): string {
  if (typeof v !== 'string') invalid(path, `expected a string, got ${describe(v)}`);
  return v;
}

/** A string or a non-empty list of strings (the list forms of equals-ignore-case and wildcard). */
function requireStrings(v: unknown, path: string): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.length > 0) return v.map((s, i) => requireString(s, `${path}[${i}]`));
  return invalid(path, `expected a string or a non-empty array of strings, got ${describe(v)}`);
}

function requireNumber(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) invalid(path, `expected a number, got ${describe(v)}`);
  return v;
}

const lower = (s: string) => s.toLowerCase();

/** `{ "equals-ignore-case": "x" }` or a plain string, as used inside prefix and suffix. */
function caseOption(v: unknown, path: string): { text: string; ignoreCase: boolean } {
  if (typeof v === 'string') return { text: v, ignoreCase: false };
  if (isPlainObject(v) && Object.keys(v).length === 1 && 'equals-ignore-case' in v)
    return { text: requireString(v['equals-ignore-case'], `${path}.equals-ignore-case`), ignoreCase: true };
  return invalid(path, `expected a string or { "equals-ignore-case": string }, got ${describe(v)}`);
}

function prefixTest(v: unknown, path: string): ValueTest {
  const { text, ignoreCase } = caseOption(v, path);
  const want = ignoreCase ? lower(text) : text;
  return (x) => typeof x === 'string' && (ignoreCase ? lower(x) : x).startsWith(want);
}

function suffixTest(v: unknown, path: string): ValueTest {
  const { text, ignoreCase } = caseOption(v, path);
  const want = ignoreCase ? lower(text) : text;
  return (x) => typeof x === 'string' && (ignoreCase ? lower(x) : x).endsWith(want);
}

function equalsIgnoreCaseTest(v: unknown, path: string): ValueTest {
  const wanted = new Set(requireStrings(v, path).map(lower));
  return (x) => typeof x === 'string' && wanted.has(lower(x));
}

/**
 * `*` matches any run of characters; `\*` is a literal star and `\\` a literal backslash. Like
 * EventBridge, consecutive stars and any other escape are rejected.
 */
function wildcardRegex(glob: string, path: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') invalid(path, `consecutive wildcard characters at position ${i} in ${describe(glob)}`);
      source += '[\\s\\S]*';
    } else if (c === '\\') {
      const next = glob[i + 1];
      if (next !== '*' && next !== '\\') invalid(path, `"\\" may only escape "*" or "\\" in ${describe(glob)}`);
      source += `\\${next}`;
      i++;
    } else {
      source += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

function wildcardTest(v: unknown, path: string): ValueTest {
  const regexes = requireStrings(v, path).map((g) => wildcardRegex(g, path));
  return (x) => typeof x === 'string' && regexes.some((r) => r.test(x));
}

/** `[op, n]` or `[lowerOp, n, upperOp, m]`; "=" only alone. */
function numericTest(v: unknown, path: string): ValueTest {
  if (!Array.isArray(v) || (v.length !== 2 && v.length !== 4))
    invalid(path, `expected [op, number] or [">"|">=", number, "<"|"<=", number], got ${describe(v)}`);
  const checks: ((n: number) => boolean)[] = [];
  let lowerBound: number | undefined;
  let upperBound: number | undefined;
  for (let i = 0; i < v.length; i += 2) {
    const op = v[i];
    const n = requireNumber(v[i + 1], `${path}[${i + 1}]`);
    if (op === '=' && v.length === 2) checks.push((x) => x === n);
    else if (NUMERIC_LOWER.has(op) && lowerBound === undefined) {
      lowerBound = n;
      checks.push(op === '>' ? (x) => x > n : (x) => x >= n);
    } else if (NUMERIC_UPPER.has(op) && upperBound === undefined) {
      upperBound = n;
      checks.push(op === '<' ? (x) => x < n : (x) => x <= n);
    } else invalid(`${path}[${i}]`, `unexpected numeric operator ${describe(op)}`);
  }
  if (lowerBound !== undefined && upperBound !== undefined && lowerBound >= upperBound)
    invalid(path, `the lower bound ${lowerBound} must be below the upper bound ${upperBound}`);
  return (x) => typeof x === 'number' && checks.every((c) => c(x));
}

function cidrTest(v: unknown, path: string): ValueTest {
  const text = requireString(v, path);
  const [address, bits, ...rest] = text.split('/');
  const family = isIP(address ?? '');
  const max = family === 6 ? 128 : 32;
  const prefix = bits === undefined ? max : Number(bits);
  if (!family || rest.length > 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > max || bits === '')
    invalid(path, `expected an IPv4 or IPv6 address or CIDR block, got ${describe(text)}`);
  const type = family === 6 ? 'ipv6' : 'ipv4';
  const block = new BlockList();
  block.addSubnet(address!, prefix, type);
  return (x) => typeof x === 'string' && isIP(x) === family && block.check(x, type);
}

/** Value equality as EventBridge compares JSON values: same type and value. */
function exactTest(wanted: Scalar): ValueTest {
  return (x) => x === wanted;
}

function anythingButTest(v: unknown, path: string): ValueTest {
  let excluded: ValueTest;
  if (typeof v === 'string' || typeof v === 'number') {
    excluded = exactTest(requireScalar(v, path));
  } else if (Array.isArray(v)) {
    if (v.length === 0) invalid(path, 'anything-but needs at least one value');
    const allStrings = v.every((x) => typeof x === 'string');
    const allNumbers = v.every((x) => typeof x === 'number' && Number.isFinite(x));
    if (!allStrings && !allNumbers) invalid(path, `anything-but lists must hold only strings or only numbers, got ${describe(v)}`);
    const set = new Set<Scalar>(v as Scalar[]);
    excluded = (x) => set.has(x);
  } else if (isPlainObject(v) && Object.keys(v).length === 1) {
    const [op, arg] = Object.entries(v)[0]!;
    const at = `${path}.${op}`;
    if (op === 'prefix') excluded = prefixTest(requireString(arg, at), at);
    else if (op === 'suffix') excluded = suffixTest(requireString(arg, at), at);
    else if (op === 'equals-ignore-case') excluded = equalsIgnoreCaseTest(arg, at);
    else if (op === 'wildcard') excluded = wildcardTest(arg, at);
    else return invalid(at, `anything-but does not support ${describe(op)} (use prefix, suffix, equals-ignore-case or wildcard)`);
  } else {
    return invalid(path, `anything-but takes a string, a number, a list, or one of prefix/suffix/equals-ignore-case/wildcard, got ${describe(v)}`);
  }
  return (x) => !excluded(x);
}

function requireScalar(v: unknown, path: string): Scalar {
  if (typeof v === 'number') return requireNumber(v, path);
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  return invalid(path, `expected a string, number, boolean or null, got ${describe(v)}`);
}

const OPERATORS: Record<string, (arg: unknown, path: string) => ValueTest> = {
  prefix: prefixTest,
  suffix: suffixTest,
  'equals-ignore-case': (arg, path) => equalsIgnoreCaseTest(requireString(arg, path), path),
  wildcard: (arg, path) => wildcardTest(requireString(arg, path), path),
  'anything-but': anythingButTest,
  numeric: numericTest,
  cidr: cidrTest,
};

function compileLeaf(values: unknown[], path: string): LeafNode {
  if (values.length === 0) invalid(path, 'empty arrays are not allowed');
  const tests: ValueTest[] = [];
  let existsTrue = false;
  let existsFalse = false;
  values.forEach((entry, i) => {
    const at = `${path}[${i}]`;
    if (!isPlainObject(entry)) {
      tests.push(exactTest(requireScalar(entry, at)));
      return;
    }
    const keys = Object.keys(entry);
    if (keys.length !== 1) invalid(at, `an operator object has exactly one key, got ${describe(keys)}`);
    const op = keys[0]!;
    if (op === 'exists') {
      if (typeof entry.exists !== 'boolean') invalid(`${at}.exists`, `expected true or false, got ${describe(entry.exists)}`);
      if (entry.exists) existsTrue = true;
      else existsFalse = true;
      return;
    }
    const make = OPERATORS[op];
    if (!make) invalid(at, `unrecognized match type ${describe(op)}`);
    tests.push(make(entry[op], `${at}.${op}`));
  });
  return { kind: 'leaf', tests, existsTrue, existsFalse };
}

function compileObject(pattern: unknown, path: string): ObjectNode {
  if (!isPlainObject(pattern)) invalid(path, `expected an object, got ${describe(pattern)}`);
  const entries = Object.entries(pattern);
  if (entries.length === 0) invalid(path, 'empty objects are not allowed');
  const fields: FieldNode[] = [];
  const ors: ObjectNode[][] = [];
  for (const [key, value] of entries) {
    const at = path ? `${path}.${key}` : key;
    if (key === '$or') {
      if (!Array.isArray(value) || value.length < 2 || !value.every(isPlainObject))
        invalid(at, '$or takes an array of at least two pattern objects');
      ors.push(value.map((alt, i) => compileObject(alt, `${at}[${i}]`)));
    } else if (Array.isArray(value)) {
      fields.push({ key, node: compileLeaf(value, at) });
    } else if (isPlainObject(value)) {
      fields.push({ key, node: compileObject(value, at) });
    } else {
      invalid(at, `expected an array of values or a nested object, got ${describe(value)}`);
    }
  }
  return { kind: 'object', fields, ors };
}

/** Leaf values of an event field: arrays are flattened (any element may match), objects are not leaves. */
function leafValues(value: unknown, out: Scalar[] = []): Scalar[] {
  if (Array.isArray(value)) for (const v of value) leafValues(v, out);
  else if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out.push(value);
  return out;
}

/** The objects an event value offers to a nested pattern: itself, or the elements of (nested) arrays. */
function objectCandidates(value: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(value)) for (const v of value) objectCandidates(v, out);
  else if (isPlainObject(value)) out.push(value);
  return out;
}

function matchLeaf(node: LeafNode, value: unknown): boolean {
  const values = leafValues(value);
  if (values.length === 0) return node.existsFalse;
  return node.existsTrue || values.some((x) => node.tests.some((t) => t(x)));
}

function matchFields(node: ObjectNode, obj: Record<string, unknown> | undefined): boolean {
  return (
    node.fields.every(({ key, node: child }) => {
      const value = obj && Object.hasOwn(obj, key) ? obj[key] : undefined;
      return child.kind === 'leaf' ? matchLeaf(child, value) : matchObject(child, value);
    }) && node.ors.every((alternatives) => alternatives.some((alt) => matchFields(alt, obj)))
  );
}

function matchObject(node: ObjectNode, value: unknown): boolean {
  const candidates = objectCandidates(value);
  // No object here: only patterns made entirely of `exists: false` can still match.
  if (candidates.length === 0) return matchFields(node, undefined);
  return candidates.some((obj) => matchFields(node, obj));
}

/**
 * Validate an event pattern (an object, or its JSON text as CloudFormation allows) and compile it.
 * @throws InvalidEventPatternError naming the path of the first malformed part.
 * @example
 * const isOrder = compilePattern({ source: ['shop'], detail: { total: [{ numeric: ['>', 0] }] } });
 * isOrder({ source: 'shop', detail: { total: 12 } }); // true
 */
export function compilePattern(pattern: unknown): EventMatcher {
  let parsed = pattern;
  if (typeof pattern === 'string') {
    try {
      parsed = JSON.parse(pattern);
    } catch (e) {
      invalid('', `not valid JSON: ${(e as Error).message}`);
    }
  }
  const root = compileObject(parsed, '');
  return (event) => matchObject(root, event);
}

/**
 * Whether `event` matches the EventBridge `pattern`. Validates the pattern on every call; compile
 * once with {@link compilePattern} when matching many events.
 * @throws InvalidEventPatternError when the pattern is malformed.
 */
export function matches(pattern: unknown, event: unknown): boolean {
  return compilePattern(pattern)(event);
}
