/**
 * What a rule target receives: the whole event, or the target's `Input` (constant JSON),
 * `InputPath` (a JSONPath into the event) or `InputTransformer` (paths map + template), as the
 * EventBridge user guide's "Amazon EventBridge input transformation" describes. Pure.
 */
import { DefinitionError } from '../../../core/errors.ts';

/** The input settings of an `AWS::Events::Rule` target (CloudFormation property names). */
export interface TargetInputSettings {
  readonly Input?: string;
  readonly InputPath?: string;
  readonly InputTransformer?: {
    readonly InputPathsMap?: Readonly<Record<string, string>>;
    readonly InputTemplate: string;
  };
}

/** What the predefined `<aws.events.*>` template variables read besides the event itself. */
export interface InputContext {
  readonly ruleName: string;
  readonly ruleArn: string;
  /** When the bus accepted the event (ISO 8601). */
  readonly ingestionTime: string;
}

/** Turns a matched event into the payload one target receives. */
export type InputBuilder = (event: Record<string, unknown>, context: InputContext) => unknown;

type Segment = string | number;

/** JSONPath in the subset EventBridge uses for InputPath and InputPathsMap: `$`, `.name`, `['name']`, `[0]`. */
function parseJsonPath(path: string, where: string): Segment[] {
  const fail = (): never => {
    throw new DefinitionError(
      'template',
      where,
      `unsupported JSONPath ${JSON.stringify(path)} (use $, $.a.b, $['a'] or $.a[0])`,
    );
  };
  if (!path.startsWith('$')) fail();
  const segments: Segment[] = [];
  const token = /\.([^.[\]]+)|\['([^']*)'\]|\[(\d+)\]/y;
  token.lastIndex = 1;
  while (token.lastIndex < path.length) {
    const m = token.exec(path);
    if (!m) return fail();
    segments.push(m[3] !== undefined ? Number(m[3]) : (m[1] ?? m[2])!);
  }
  return segments;
}

function select(value: unknown, segments: readonly Segment[]): unknown {
  let current = value;
  for (const s of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[s];
  }
  return current;
}

const PREDEFINED = new Set([
  'aws.events.rule-arn',
  'aws.events.rule-name',
  'aws.events.event',
  'aws.events.event.json',
  'aws.events.event.ingestion-time',
]);

function predefined(name: string, event: Record<string, unknown>, rule: InputContext): unknown {
  switch (name) {
    case 'aws.events.rule-arn':
      return rule.ruleArn;
    case 'aws.events.rule-name':
      return rule.ruleName;
    case 'aws.events.event.ingestion-time':
      return rule.ingestionTime;
    default: // aws.events.event and aws.events.event.json: the original event
      return event;
  }
}

/**
 * Fill `<name>` placeholders. Inside a JSON string a value is inserted as text (strings as they
 * are, other values as JSON), escaped so the result stays valid JSON; outside a string it is
 * inserted as JSON, a missing value as `null`.
 */
function render(template: string, lookup: (name: string) => { found: boolean; value: unknown }): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c === '\\' && inString) {
      out += c + (template[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '"') inString = !inString;
    if (c === '<') {
      const end = template.indexOf('>', i);
      const name = end > i ? template.slice(i + 1, end) : '';
      const { found, value } = name ? lookup(name) : { found: false, value: undefined };
      if (found) {
        if (!inString) out += value === undefined ? 'null' : JSON.stringify(value);
        else if (value !== undefined)
          out += JSON.stringify(typeof value === 'string' ? value : JSON.stringify(value)).slice(1, -1);
        i = end;
        continue;
      }
    }
    out += c;
  }
  return out;
}

/** The rendered template as JSON when it is JSON (what a Lambda or state machine target gets), else the text. */
function parseIfJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Compile a target's input settings once (validating its JSON and JSONPaths).
 * @param where the target's path in the template (`Resources.Rule.Properties.Targets.0`), for errors.
 * @throws DefinitionError for a malformed Input or JSONPath, or more than one input setting.
 */
export function compileTargetInput(settings: TargetInputSettings, where: string): InputBuilder {
  const { Input, InputPath, InputTransformer } = settings;
  if ([Input, InputPath, InputTransformer].filter((s) => s !== undefined).length > 1)
    throw new DefinitionError('template', where, 'Input, InputPath and InputTransformer are mutually exclusive');
  if (Input !== undefined) {
    let constant: unknown;
    try {
      constant = JSON.parse(Input);
    } catch {
      throw new DefinitionError('template', `${where}.Input`, `not valid JSON: ${Input}`);
    }
    return () => structuredClone(constant);
  }
  if (InputPath !== undefined) {
    const segments = parseJsonPath(InputPath, `${where}.InputPath`);
    return (event) => structuredClone(select(event, segments));
  }
  if (InputTransformer !== undefined) {
    const paths = Object.entries(InputTransformer.InputPathsMap ?? {}).map(
      ([name, path]) => [name, parseJsonPath(path, `${where}.InputTransformer.InputPathsMap.${name}`)] as const,
    );
    const byName = new Map(paths);
    return (event, rule) =>
      parseIfJson(
        render(InputTransformer.InputTemplate, (name) => {
          const segments = byName.get(name);
          if (segments) return { found: true, value: select(event, segments) };
          if (PREDEFINED.has(name)) return { found: true, value: predefined(name, event, rule) };
          return { found: false, value: undefined };
        }),
      );
  }
  return (event) => structuredClone(event);
}
