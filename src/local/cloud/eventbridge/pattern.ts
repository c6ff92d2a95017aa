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
 * - `exists: false` matches a missing field and a field that is not a leaf (an object);
 * - field names are flattened with "." (event-ruler compiles `{"a": {"b": [1]}}` to the field
 *   `a.b`), so a dotted key and its nested form are the same field, in patterns and in events;
 *   when a pattern names one field twice, the later definition wins, as in event-ruler;
 * - patterns EventBridge refuses are refused: empty anything-but prefixes/suffixes, consecutive
 *   or badly escaped wildcards, and wildcards too complex to match cheaply (see `MAX_WILDCARD_COMPLEXITY`).
 */
import { BlockList, isIP } from 'node:net';
import { InvalidEventPatternError } from '../../../core/errors.ts';

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

/** @param wildcards collects the globs of the field, whose combined complexity is checked once the pattern is compiled. */
function wildcardTest(v: unknown, path: string, wildcards: string[]): ValueTest {
  const globs = requireStrings(v, path);
  const regexes = globs.map((g) => wildcardRegex(g, path));
  wildcards.push(...globs);
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

const anyOf =
  (tests: readonly ValueTest[]): ValueTest =>
  (x) =>
    tests.some((t) => t(x));

function anythingButTest(v: unknown, path: string, wildcards: string[]): ValueTest {
  let excluded: ValueTest;
  if (typeof v === 'string' || typeof v === 'number') {
    excluded = exactTest(requireScalar(v, path));
  } else if (Array.isArray(v)) {
    if (v.length === 0) invalid(path, 'anything-but needs at least one value');
    const allStrings = v.every((x) => typeof x === 'string');
    const allNumbers = v.every((x) => typeof x === 'number' && Number.isFinite(x));
    if (!allStrings && !allNumbers)
      invalid(path, `anything-but lists must hold only strings or only numbers, got ${describe(v)}`);
    const set = new Set<Scalar>(v as Scalar[]);
    excluded = (x) => set.has(x);
  } else if (isPlainObject(v) && Object.keys(v).length === 1) {
    const [op, arg] = Object.entries(v)[0]!;
    const at = `${path}.${op}`;
    // Each takes one string or a list of them: `{"anything-but": {"prefix": ["a", "b"]}}` excludes both prefixes.
    const nonEmpty = (texts: string[]) => {
      if (texts.includes(''))
        invalid(at, `anything-but ${op} must not be empty (EventBridge refuses a null prefix/suffix)`);
      return texts;
    };
    if (op === 'prefix') excluded = anyOf(nonEmpty(requireStrings(arg, at)).map((t) => prefixTest(t, at)));
    else if (op === 'suffix') excluded = anyOf(nonEmpty(requireStrings(arg, at)).map((t) => suffixTest(t, at)));
    else if (op === 'equals-ignore-case') excluded = equalsIgnoreCaseTest(arg, at);
    else if (op === 'wildcard') excluded = wildcardTest(arg, at, wildcards);
    else
      return invalid(
        at,
        `anything-but does not support ${describe(op)} (use prefix, suffix, equals-ignore-case or wildcard)`,
      );
  } else {
    return invalid(
      path,
      `anything-but takes a string, a number, a list, or one of prefix/suffix/equals-ignore-case/wildcard, got ${describe(v)}`,
    );
  }
  return (x) => !excluded(x);
}

function requireScalar(v: unknown, path: string): Scalar {
  if (typeof v === 'number') return requireNumber(v, path);
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  return invalid(path, `expected a string, number, boolean or null, got ${describe(v)}`);
}

const OPERATORS: Record<string, (arg: unknown, path: string, wildcards: string[]) => ValueTest> = {
  prefix: prefixTest,
  suffix: suffixTest,
  'equals-ignore-case': (arg, path) => equalsIgnoreCaseTest(requireString(arg, path), path),
  wildcard: (arg, path, wildcards) => wildcardTest(requireString(arg, path), path, wildcards),
  'anything-but': anythingButTest,
  numeric: numericTest,
  cidr: cidrTest,
};

function compileLeaf(values: unknown[], path: string, wildcards: string[]): LeafNode {
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
      if (typeof entry.exists !== 'boolean')
        invalid(`${at}.exists`, `expected true or false, got ${describe(entry.exists)}`);
      if (entry.exists) existsTrue = true;
      else existsFalse = true;
      return;
    }
    const make = OPERATORS[op];
    if (!make) invalid(at, `unrecognized match type ${describe(op)}`);
    tests.push(make(entry[op], `${at}.${op}`, wildcards));
  });
  return { kind: 'leaf', tests, existsTrue, existsFalse };
}

/** The glob lists of each flattened field name, for the complexity check. */
type WildcardsByField = Map<string, string[]>;

function compileObject(pattern: unknown, path: string, field: string, wildcards: WildcardsByField): ObjectNode {
  if (!isPlainObject(pattern)) invalid(path, `expected an object, got ${describe(pattern)}`);
  return compileEntries(Object.entries(pattern), path, field, wildcards);
}

/**
 * Compile the entries of one pattern object. Dotted keys are split into their nested form first
 * (`"a.b": [1]` is `"a": {"b": [1]}`), so both spellings land on the same field.
 * @param field the flattened field name of this object (`''` at the root).
 */
function compileEntries(
  entries: [string, unknown][],
  path: string,
  field: string,
  wildcards: WildcardsByField,
): ObjectNode {
  if (entries.length === 0) invalid(path, 'empty objects are not allowed');
  const ors: ObjectNode[][] = [];
  // Per first name segment, in order: the leaf lists that end here and the entries nested below.
  const groups = new Map<string, { leaf?: { values: unknown[]; at: string }; nested: [string, unknown][] }>();
  for (const [key, value] of entries) {
    const at = path ? `${path}.${key}` : key;
    if (key === '$or') {
      if (!Array.isArray(value) || value.length < 2 || !value.every(isPlainObject))
        invalid(at, '$or takes an array of at least two pattern objects');
      ors.push(value.map((alt, i) => compileObject(alt, `${at}[${i}]`, field, wildcards)));
      continue;
    }
    const dot = key.indexOf('.');
    const head = dot < 0 ? key : key.slice(0, dot);
    const group = groups.get(head) ?? { nested: [] };
    groups.set(head, group);
    if (dot >= 0) group.nested.push([key.slice(dot + 1), value]);
    // The later definition of a field replaces the earlier one (event-ruler keeps one list per field name).
    else if (Array.isArray(value)) group.leaf = { values: value, at };
    else if (isPlainObject(value)) group.nested.push(...Object.entries(value));
    else invalid(at, `expected an array of values or a nested object, got ${describe(value)}`);
  }
  const fields: FieldNode[] = [];
  for (const [head, { leaf, nested }] of groups) {
    const name = field ? `${field}.${head}` : head;
    const at = path ? `${path}.${head}` : head;
    if (leaf) {
      const globs = wildcards.get(name) ?? [];
      wildcards.set(name, globs);
      fields.push({ key: head, node: compileLeaf(leaf.values, leaf.at, globs) });
    }
    if (nested.length > 0) fields.push({ key: head, node: compileEntries(nested, at, name, wildcards) });
  }
  return { kind: 'object', fields, ors };
}

/**
 * Upper bound on a field's wildcard complexity. event-ruler's MachineComplexityEvaluator measures
 * the most wildcard-pattern states one input value can keep active at once; EventBridge refuses a
 * rule over its limit ("Rule is too complex - try using fewer wildcard characters or fewer
 * repeating character sequences after a wildcard character"). The limit is not published; this
 * is the value emulators of EventBridge's admission use.
 */
export const MAX_WILDCARD_COMPLEXITY = 10;
/** Distinct active-state sets explored before a field is declared too complex (keeps compiling cheap). */
const MAX_EXPLORED_STATE_SETS = 2_000;

/** A glob in parts: a literal character, or `STAR`. Escapes were validated by `wildcardRegex`. */
const STAR = null;
function globParts(glob: string): (string | null)[] {
  const parts: (string | null)[] = [];
  for (let i = 0; i < glob.length; i++) parts.push(glob[i] === '*' ? STAR : glob[i] === '\\' ? glob[++i]! : glob[i]!);
  return parts;
}

/**
 * The most NFA states the globs of one field can have active together, over every input: a
 * subset construction over the globs' literal characters plus one stand-in for all others.
 * Returns early once over `limit`.
 */
export function wildcardComplexity(globs: readonly string[], limit = MAX_WILDCARD_COMPLEXITY): number {
  const patterns = [...new Set(globs)].map(globParts);
  if (patterns.length === 0) return 0;
  // A state is "pattern:position"; a STAR at a position also lets the next position be active.
  const close = (states: Set<string>) => {
    for (const state of states) {
      const [p, i] = state.split(':').map(Number) as [number, number];
      if (patterns[p]![i] === STAR) states.add(`${p}:${i + 1}`);
    }
    return states;
  };
  const step = (states: Set<string>, c: string | undefined) => {
    const next = new Set<string>();
    for (const state of states) {
      const [p, i] = state.split(':').map(Number) as [number, number];
      const part = patterns[p]![i];
      if (part === STAR) next.add(state);
      else if (part !== undefined && part === c) next.add(`${p}:${i + 1}`);
    }
    return close(next);
  };
  const alphabet = [...new Set(patterns.flat().filter((t): t is string => t !== STAR)), undefined];
  const start = close(new Set(patterns.map((_, p) => `${p}:0`)));
  const seen = new Set<string>();
  const queue = [start];
  let most = 0;
  while (queue.length > 0) {
    const states = queue.pop()!;
    const key = [...states].sort().join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    most = Math.max(most, states.size);
    if (most > limit || seen.size > MAX_EXPLORED_STATE_SETS) return limit + 1;
    for (const c of alphabet) {
      const next = step(states, c);
      if (next.size > 0) queue.push(next);
    }
  }
  return most;
}

/** Leaf values of an event field: arrays are flattened (any element may match), objects are not leaves. */
function leafValues(value: unknown, out: Scalar[] = []): Scalar[] {
  if (Array.isArray(value)) for (const v of value) leafValues(v, out);
  else if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    out.push(value);
  return out;
}

/** The objects an event value offers to a nested pattern: itself, or the elements of (nested) arrays. */
function objectCandidates(value: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(value)) for (const v of value) objectCandidates(v, out);
  else if (isPlainObject(value)) out.push(value);
  return out;
}

/**
 * The event with dotted keys split into their nested form (`{"a.b": 1}` is `{"a": {"b": 1}}`), as
 * EventBridge flattens event field names with ".". Values that land on the same field are kept
 * together as an array, which matches like a multi-valued field.
 */
function expandDotted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expandDotted);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const segments = key.split('.');
    let nested = expandDotted(v);
    for (let i = segments.length - 1; i > 0; i--) nested = { [segments[i]!]: nested };
    merge(out, segments[0]!, nested);
  }
  return out;
}

/** Merge `value` into `target[key]`; both sides are fresh copies made by `expandDotted`. */
function merge(target: Record<string, unknown>, key: string, value: unknown): void {
  if (!Object.hasOwn(target, key)) {
    target[key] = value;
    return;
  }
  const existing = target[key];
  if (isPlainObject(existing) && isPlainObject(value))
    for (const [k, v] of Object.entries(value)) merge(existing, k, v);
  else
    target[key] = [...(Array.isArray(existing) ? existing : [existing]), ...(Array.isArray(value) ? value : [value])];
}

const hasDottedKey = (value: unknown): boolean =>
  Array.isArray(value)
    ? value.some(hasDottedKey)
    : isPlainObject(value) && Object.entries(value).some(([k, v]) => k.includes('.') || hasDottedKey(v));

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
  const wildcards: WildcardsByField = new Map();
  const root = compileObject(parsed, '', '', wildcards);
  for (const [field, globs] of wildcards)
    if (wildcardComplexity(globs) > MAX_WILDCARD_COMPLEXITY)
      invalid(
        field,
        'rule is too complex - try using fewer wildcard characters or fewer repeating character sequences after a wildcard character',
      );
  // Most events have no dotted key; only those pay for the rewrite.
  return (event) => matchObject(root, hasDottedKey(event) ? expandDotted(event) : event);
}

/**
 * Whether `event` matches the EventBridge `pattern`. Validates the pattern on every call; compile
 * once with {@link compilePattern} when matching many events.
 * @throws InvalidEventPatternError when the pattern is malformed.
 */
export function matches(pattern: unknown, event: unknown): boolean {
  return compilePattern(pattern)(event);
}
