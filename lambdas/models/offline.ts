import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { checkDefinition, readDefinitionYaml, relPath } from '../lib/definition-file.ts';
import { DefinitionError, InvalidModelOutputError } from '../lib/errors.ts';
import { untrustedFields } from '../lib/workflow/input.ts';
import type { StepDefinition, WorkflowDefinition } from '../lib/workflow/schema.ts';
import { ROUTE_TOOL, readStepContext, type StepPromptContext } from '../steps/prompt.ts';
import { lookup, renderTemplate, templatePaths } from '../steps/template.ts';
import type { ContentBlock, ConverseRequest, ConverseResponse, ModelProvider } from './port.ts';

/**
 * The `offline` model provider: a deterministic, rule-driven stand-in for machines without AWS
 * access. It is NOT an LLM. It answers the runner's Converse requests by evaluating the rules a
 * workflow declares in `offline-model.yaml` (serial patterns, keyword lists, tool arguments and
 * reply templates); nothing workflow-specific lives in this file. Its answers go through the same
 * tool-use loop and route validation as a real model's, and steps it runs are `decidedBy: offline`.
 */

const Name = z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]*$/);

/** All conditions of a rule must hold; a rule without conditions always applies. */
const ConditionSchema = z
  .object({
    found: Name.optional().describe('A named pattern matches the input text (an email\'s subject and body); its match is then `{{found.<name>}}`.'),
    anyKeyword: z.array(Name).min(1).optional().describe('Some keyword of one of these lists occurs in the input text.'),
    noKeyword: z.array(Name).min(1).optional().describe('No keyword of these lists occurs in the input text.'),
    failed: z.string().optional().describe('The latest call of this tool in this step returned an error.'),
    absent: z.array(z.string()).min(1).optional().describe('These scope paths have no value (e.g. `data.ticketId`).'),
    text: z
      .string()
      .optional()
      .describe('`found`, `anyKeyword` and `noKeyword` read this scope path (`data.remainingQuery`) instead of the input text.'),
    temperature: z
      .object({
        min: z.number().min(0).max(1).default(0).describe('Lowest temperature the rule holds for.'),
        max: z.number().min(0).max(2).default(2).describe('The rule holds below this temperature.'),
      })
      .strict()
      .optional()
      .describe('The request\'s sampling temperature is in [min, max) (a consensus sample\'s): how rules make samples disagree.'),
  })
  .strict();

const RuleSchema = z
  .object({
    when: ConditionSchema.default({}).describe('When the rule applies: every condition given must hold; none given: always.'),
    calls: z
      .array(
        z
          .object({
            tool: z.string().describe('A tool of the step\'s allow-list.'),
            args: z.record(z.string(), z.unknown()).default({}).describe('Its arguments: templates (`{{found.serial}}`).'),
          })
          .strict(),
      )
      .default([])
      .describe('Tool calls to make first, in order, each once.'),
    route: z
      .object({
        next: z.string().describe('A declared edge of the step.'),
        reason: z.string().describe('The route reason (a template).'),
        fields: z.record(z.string(), z.unknown()).default({}).describe('The step\'s outputs (templates).'),
      })
      .strict()
      .describe('The `route` call that ends the step.'),
  })
  .strict();

/** `statemachines/<workflow>/offline-model.yaml` */
export const OfflineRulesSchema = z
  .object({
    description: z.string().optional().describe('What the rules stand in for.'),
    patterns: z.record(Name, z.string()).default({}).describe('Named regular expressions (case-insensitive); a capture group, if any, is the value.'),
    keywords: z
      .record(Name, z.array(z.string().min(1)).min(1))
      .default({})
      .describe('Named keyword lists, matched case-insensitively on word boundaries.'),
    steps: z.record(z.string(), z.array(RuleSchema).min(1)).describe('Per LLM step: rules in order; the first whose conditions hold decides.'),
  })
  .strict()
  .meta({ title: 'offline-model.yaml' });

export type OfflineRules = z.infer<typeof OfflineRulesSchema>;
type Rule = z.infer<typeof RuleSchema>;

export const OFFLINE_RULES_FILE = 'offline-model.yaml';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
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
  typeof value === 'string' ? [value] : value !== null && typeof value === 'object' ? Object.values(value).flatMap(strings) : [];

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

  /** @param rules already validated with {@link OfflineRulesSchema}; pattern and keyword-list names are checked here. */
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
        words.map((word) => new RegExp(`(?<![\\p{L}\\p{N}])${escape(normalize(word))}(?![\\p{L}\\p{N}])`, 'iu')),
      ]),
    );
    for (const [step, stepRules] of Object.entries(rules.steps)) {
      stepRules.forEach(({ when }, i) => {
        const where = `steps.${step}.${i}.when`;
        if (when.found && !this.patterns.has(when.found)) throw new DefinitionError(OFFLINE_RULES_FILE, `${where}.found`, `no pattern "${when.found}"`);
        for (const list of [...(when.anyKeyword ?? []), ...(when.noKeyword ?? [])])
          if (!this.keywords.has(list)) throw new DefinitionError(OFFLINE_RULES_FILE, where, `no keyword list "${list}"`);
      });
    }
  }

  /** Load and check a workflow's `offline-model.yaml` against its steps. */
  static forWorkflow(def: WorkflowDefinition): OfflineModel {
    return new OfflineModel(loadOfflineRules(def));
  }

  async converse(request: ConverseRequest): Promise<ConverseResponse> {
    const context = readStepContext(request);
    if (!context) throw new InvalidModelOutputError('offline stand-in: the request carries no step context (it only answers the step runner)');
    const stepRules = this.rules.steps[context.step];
    if (!stepRules) throw new InvalidModelOutputError(`offline stand-in: no rules for step ${context.step} in ${OFFLINE_RULES_FILE}`);

    const inputText = normalize(matchedText(context));
    const calls = conversationCalls(request);
    const tool: Record<string, unknown> = {};
    for (const call of calls) if (call.error === undefined) tool[call.tool] = call.result;
    // Untrusted fields also at the top level, so a rule reads `email.fromName` as the prompt shows it.
    const base = { ...context.untrusted, input: context.input, untrusted: context.untrusted, data: context.data, error: context.error, counters: context.counters, tool };
    const temperature = request.inferenceConfig?.temperature ?? 0;
    // What a rule's patterns and keywords read, and what they found there (`found.*` of its templates).
    const read = (rule: Rule) => {
      const text = rule.when.text === undefined ? inputText : normalize(strings(lookup(base, rule.when.text)).join('\n'));
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
    if (index < 0) throw new InvalidModelOutputError(`offline stand-in: no rule of step ${context.step} applies (add a last rule without conditions)`);
    const rule = stepRules[index]!;
    const { scope } = read(rule);
    const pending = rule.calls.find((call) => !calls.some((seen) => seen.tool === call.tool));
    const [name, input] = pending
      ? [pending.tool, this.render(pending.args, scope, context, index)]
      : [ROUTE_TOOL, this.render({ ...rule.route.fields, next: rule.route.next, reason: rule.route.reason }, scope, context, index)];

    const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
    const content: ContentBlock[] = [
      { text: `[offline stand-in, not an LLM] step ${context.step}: rule ${index + 1} of ${stepRules.length}` },
      { toolUse: { toolUseId: `offline-${turn}`, name, input } },
    ];
    // No tokens: nothing was generated by a model.
    return { output: { message: { role: 'assistant', content } }, stopReason: 'tool_use', usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } };
  }

  private holds(rule: Rule, text: string, calls: SeenCall[], scope: Record<string, unknown>, temperature: number): boolean {
    const { found, anyKeyword, noKeyword, failed, absent } = rule.when;
    if (rule.when.temperature && !(temperature >= rule.when.temperature.min && temperature < rule.when.temperature.max)) return false;
    const mentions = (lists: string[]) => lists.some((list) => this.keywords.get(list)!.some((word) => word.test(text)));
    if (found && !this.patterns.get(found)!.test(text)) return false;
    if (anyKeyword && !mentions(anyKeyword)) return false;
    if (noKeyword && mentions(noKeyword)) return false;
    if (failed && calls.filter((c) => c.tool === failed).at(-1)?.error === undefined) return false;
    if (absent && !absent.every((path) => isEmpty(lookup(scope, path)))) return false;
    return true;
  }

  private render(template: Record<string, unknown>, scope: unknown, context: StepPromptContext, index: number): Record<string, unknown> {
    const { value, problems } = renderTemplate(template, scope);
    if (problems.length)
      throw new InvalidModelOutputError(`offline stand-in: rule ${index + 1} of step ${context.step}: ${problems.join('; ')}`);
    return value as Record<string, unknown>;
  }
}

/**
 * A rule reads what its step sees: untrusted input fields are not under `input` (the step context
 * holds them as `untrusted.<field>`), so a path `input.<untrusted field>` is always empty and the
 * rule never does what it says.
 * @throws DefinitionError naming the rule's field.
 */
function checkPaths(rule: Rule, untrusted: readonly string[], file: string, where: string): void {
  const paths: [string, string[]][] = [
    [`${where}.when.text`, rule.when.text === undefined ? [] : [rule.when.text]],
    [`${where}.when.absent`, rule.when.absent ?? []],
    ...rule.calls.map((c, j): [string, string[]] => [`${where}.calls.${j}.args`, templatePaths(c.args)]),
    [`${where}.route`, templatePaths(rule.route)],
  ];
  for (const [field, list] of paths)
    for (const path of list) {
      const [root, name] = path.split('.');
      if (root === 'input' && name !== undefined && untrusted.includes(name))
        throw new DefinitionError(file, field, `${path} is never set: ${name} is untrusted, so the step reads it as untrusted.${path.slice('input.'.length)}`);
    }
}

/**
 * The value a rule votes for in a consensus step must be one the vote counts: a rule that holds at
 * temperature 0 and sets `vote` to another value has every cold sample discarded. (A rule for hot
 * samples only, `temperature.min` above 0, may stand for a model that drifts to an invented value.)
 */
function checkVote(rule: Rule, step: StepDefinition, tools: readonly string[], file: string, where: string): void {
  const { vote, choices } = step.consensus ?? {};
  if (vote === undefined || choices === undefined || (rule.when.temperature?.min ?? 0) > 0) return;
  const value = rule.route.fields[vote];
  if (typeof value !== 'string' || templatePaths(value).length) return;
  const allowed = choices === 'tools' ? tools : choices;
  if (!allowed.includes(value))
    throw new DefinitionError(file, `${where}.route.fields.${vote}`, `"${value}" is not one of the consensus choices (${allowed.join(', ')}): the vote would discard it`);
}

/**
 * Read `offline-model.yaml` from the workflow folder and check it against the workflow: every LLM
 * step has rules, rules name only LLM steps, their routes are declared edges, their calls are
 * tools the step may use, they read only what the step sees and vote only for values counted.
 */
export function loadOfflineRules(def: WorkflowDefinition): OfflineRules {
  const file = join(def.dir, OFFLINE_RULES_FILE);
  const shown = relPath(file);
  if (!existsSync(file)) throw new DefinitionError(shown, '(file)', 'the offline model needs this file (MODEL_PROVIDER=offline)');
  const rules = checkDefinition(OfflineRulesSchema, readDefinitionYaml(file), shown);
  for (const step of def.steps.filter((s) => s.kind === 'llm'))
    if (!rules.steps[step.name]) throw new DefinitionError(shown, `steps.${step.name}`, 'missing: every LLM step needs rules');
  for (const [name, stepRules] of Object.entries(rules.steps)) {
    const step = def.steps.find((s) => s.name === name && s.kind === 'llm');
    if (!step) throw new DefinitionError(shown, `steps.${name}`, 'not an LLM step of this workflow');
    stepRules.forEach((rule, i) => {
      checkPaths(rule, untrustedFields(def), shown, `steps.${name}.${i}`);
      checkVote(rule, step, def.manifest.tools, shown, `steps.${name}.${i}`);
      if (!step.next.includes(rule.route.next))
        throw new DefinitionError(shown, `steps.${name}.${i}.route.next`, `"${rule.route.next}" is not a declared edge (${step.next.join(', ')})`);
      rule.calls.forEach((call, j) => {
        if (!step.tools.includes(call.tool))
          throw new DefinitionError(shown, `steps.${name}.${i}.calls.${j}.tool`, `"${call.tool}" is not in the step's tools`);
        for (const arg of Object.keys(call.args))
          if (step.bind[call.tool]?.[arg] !== undefined)
            throw new DefinitionError(shown, `steps.${name}.${i}.calls.${j}.args.${arg}`, `bound from ${step.bind[call.tool]![arg]} by the step: the workflow fills it`);
      });
    });
  }
  return rules;
}
