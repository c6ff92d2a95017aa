/**
 * The `offline` model provider: a deterministic, rule-driven stand-in for machines without AWS
 * access. It is NOT an LLM. It answers the runner's Converse requests by evaluating the rules a
 * workflow declares in `offline-model.yaml` (serial patterns, keyword lists, tool arguments and
 * reply templates); nothing workflow-specific lives in this file. Its answers go through the same
 * tool-use loop and route validation as a real model's, and steps it runs are `decidedBy: offline`.
 */
import { DefinitionError, InvalidModelOutputError } from '../../core/errors.ts';
import { lookup, renderTemplate } from '../../core/template.ts';
import {
  loadOfflineRules,
  OFFLINE_RULES_FILE,
  type OfflineRule,
  type OfflineRules,
} from '../../definitions/offline-model.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { ContentBlock, ConverseRequest, ConverseResponse, ModelProvider } from '../contracts/model-port.ts';
import { ROUTE_TOOL, readStepContext, type StepPromptContext } from '../contracts/prompt.ts';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Curly apostrophes are common in mail; rules are written with straight ones. */
const normalize = (text: string) => text.replace(/[\u2018\u2019]/g, "'");

/** A tool call seen in the conversation so far, with its outcome. */
interface SeenCall {
  tool: string;
  result?: unknown;
  error?: string;
}

function parseResult(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Every string in a value, depth first, in key order. */
const strings = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : value !== null && typeof value === 'object'
      ? Object.values(value).flatMap(strings)
      : [];

/**
 * What patterns and keywords are matched against: the untrusted input the step reads (an email's
 * subject and body), or the whole input when the step reads none. The email's receipt time and
 * display name are metadata, not text to classify.
 */
function matchedText(context: StepPromptContext): string {
  const source = context.untrusted ?? context.input;
  const email = (source as { email?: { subject?: unknown; body?: unknown } }).email;
  if (email && typeof email === 'object') return strings([email.subject, email.body]).join('\n');
  return strings(source).join('\n');
}

const isEmpty = (value: unknown) => value === undefined || value === null || value === '';

function conversationCalls(request: ConverseRequest): SeenCall[] {
  const names = new Map<string, string>();
  const calls: SeenCall[] = [];
  for (const message of request.messages) {
    for (const block of message.content) {
      if ('toolUse' in block) names.set(block.toolUse.toolUseId, block.toolUse.name);
      if ('toolResult' in block) {
        const tool = names.get(block.toolResult.toolUseId) ?? '';
        const text = block.toolResult.content.map((c) => ('text' in c ? c.text : JSON.stringify(c.json))).join('');
        calls.push(block.toolResult.status === 'error' ? { tool, error: text } : { tool, result: parseResult(text) });
      }
    }
  }
  return calls;
}

export class OfflineModel implements ModelProvider {
  readonly name = 'offline' as const;
  private readonly patterns: Map<string, RegExp>;
  private readonly keywords: Map<string, RegExp[]>;

  /**
   * @param rules already validated with {@link OfflineRulesSchema}; pattern and keyword-list names are checked here.
   */
  constructor(private readonly rules: OfflineRules) {
    this.patterns = new Map(
      Object.entries(rules.patterns).map(([name, source]) => {
        try {
          return [name, new RegExp(source, 'iu')];
        } catch (e) {
          throw new DefinitionError(OFFLINE_RULES_FILE, `patterns.${name}`, (e as Error).message);
        }
      }),
    );
    this.keywords = new Map(
      Object.entries(rules.keywords).map(([name, words]) => [
        name,
        words.map((word) => new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(normalize(word))}(?![\\p{L}\\p{N}])`, 'iu')),
      ]),
    );
    for (const [step, stepRules] of Object.entries(rules.steps)) {
      stepRules.forEach(({ when }, i) => {
        const where = `steps.${step}.${i}.when`;
        if (when.found && !this.patterns.has(when.found))
          throw new DefinitionError(OFFLINE_RULES_FILE, `${where}.found`, `no pattern "${when.found}"`);
        for (const list of [...(when.anyKeyword ?? []), ...(when.noKeyword ?? [])])
          if (!this.keywords.has(list))
            throw new DefinitionError(OFFLINE_RULES_FILE, where, `no keyword list "${list}"`);
      });
    }
  }

  /** Load and check a workflow's `offline-model.yaml` against its steps. */
  static forWorkflow(def: WorkflowDefinition): OfflineModel {
    return new OfflineModel(loadOfflineRules(def));
  }

  async converse(request: ConverseRequest): Promise<ConverseResponse> {
    const context = readStepContext(request);
    if (!context)
      throw new InvalidModelOutputError(
        'offline stand-in: the request carries no step context (it only answers the step runner)',
      );
    const stepRules = this.rules.steps[context.step];
    if (!stepRules)
      throw new InvalidModelOutputError(`offline stand-in: no rules for step ${context.step} in ${OFFLINE_RULES_FILE}`);

    const inputText = normalize(matchedText(context));
    const calls = conversationCalls(request);
    const tool: Record<string, unknown> = {};
    for (const call of calls) if (call.error === undefined) tool[call.tool] = call.result;
    // Untrusted fields also at the top level, so a rule reads `email.fromName` as the prompt shows it.
    const base = {
      ...context.untrusted,
      input: context.input,
      untrusted: context.untrusted,
      data: context.data,
      error: context.error,
      counters: context.counters,
      tool,
    };
    const temperature = request.inferenceConfig?.temperature ?? 0;
    // What a rule's patterns and keywords read, and what they found there (`found.*` of its templates).
    const read = (rule: OfflineRule) => {
      const text =
        rule.when.text === undefined ? inputText : normalize(strings(lookup(base, rule.when.text)).join('\n'));
      const found: Record<string, string> = {};
      for (const [name, pattern] of this.patterns) {
        const m = pattern.exec(text);
        if (m) found[name] = m[1] ?? m[0];
      }
      return { text, scope: { ...base, found } };
    };

    const index = stepRules.findIndex((rule) => {
      const { text, scope } = read(rule);
      return this.holds(rule, text, calls, scope, temperature);
    });
    if (index < 0)
      throw new InvalidModelOutputError(
        `offline stand-in: no rule of step ${context.step} applies (add a last rule without conditions)`,
      );
    const rule = stepRules[index]!;
    const { scope } = read(rule);
    const pending = rule.calls.find((call) => !calls.some((seen) => seen.tool === call.tool));
    const [name, input] = pending
      ? [pending.tool, this.render(pending.args, scope, context, index)]
      : [
          ROUTE_TOOL,
          this.render(
            { ...rule.route.fields, next: rule.route.next, reason: rule.route.reason },
            scope,
            context,
            index,
          ),
        ];

    const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
    const content: ContentBlock[] = [
      {
        text: `[offline stand-in, not an LLM] step ${context.step}: rule ${index + 1} of ${stepRules.length}: ${this.matched(rule, read(rule).text, scope).join('; ')}`,
      },
      { toolUse: { toolUseId: `offline-${turn}`, name, input } },
    ];
    // No tokens: nothing was generated by a model.
    return {
      output: { message: { role: 'assistant', content } },
      stopReason: 'tool_use',
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    };
  }

  private holds(
    rule: OfflineRule,
    text: string,
    calls: SeenCall[],
    scope: Record<string, unknown>,
    temperature: number,
  ): boolean {
    const { found, anyKeyword, noKeyword, failed, absent } = rule.when;
    if (rule.when.temperature && !(temperature >= rule.when.temperature.min && temperature < rule.when.temperature.max))
      return false;
    const mentions = (lists: string[]) =>
      lists.some((list) => this.keywords.get(list)!.some((word) => word.test(text)));
    if (found && !this.patterns.get(found)!.test(text)) return false;
    if (anyKeyword && !mentions(anyKeyword)) return false;
    if (noKeyword && mentions(noKeyword)) return false;
    if (failed && calls.filter((c) => c.tool === failed).at(-1)?.error === undefined) return false;
    if (absent && !absent.every((path) => isEmpty(lookup(scope, path)))) return false;
    return true;
  }

  /** What made a rule hold, for a person: the pattern and keywords found, the lists absent, the failed tool, the empty paths. */
  private matched(rule: OfflineRule, text: string, scope: Record<string, unknown>): string[] {
    const { found, anyKeyword, noKeyword, failed, absent, temperature } = rule.when;
    const word = (list: string) =>
      this.keywords
        .get(list)!
        .map((w) => w.exec(text)?.[0])
        .find(Boolean);
    const first = anyKeyword?.find((list) => word(list));
    return [
      ...(found ? [`found ${found} "${(scope.found as Record<string, string>)[found]}"`] : []),
      ...(first ? [`keyword "${word(first)}" (${first})`] : []),
      ...(noKeyword ? [`no keyword of ${noKeyword.join(', ')}`] : []),
      ...(failed ? [`${failed} failed`] : []),
      ...(absent ? [`no value at ${absent.join(', ')}`] : []),
      ...(temperature ? [`temperature in [${temperature.min}, ${temperature.max})`] : []),
    ].concat(Object.keys(rule.when).length === 0 ? ['no conditions (the last rule)'] : []);
  }

  private render(
    template: Record<string, unknown>,
    scope: unknown,
    context: StepPromptContext,
    index: number,
  ): Record<string, unknown> {
    const { value, problems } = renderTemplate(template, scope);
    if (problems.length)
      throw new InvalidModelOutputError(
        `offline stand-in: rule ${index + 1} of step ${context.step}: ${problems.join('; ')}`,
      );
    return value as Record<string, unknown>;
  }
}
