/**
 * The offline stand-in's rules, `statemachines/<workflow>/offline-model.yaml`: named patterns and
 * keyword lists, and per LLM step the rules that decide it, checked against the workflow (declared
 * edges, allowed tools, what the step sees). The stand-in that plays them is
 * src/runtime/models/offline.ts.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { DefinitionError } from '../core/errors.ts';
import { templatePaths } from '../core/template.ts';
import { checkDefinition, readDefinitionYaml, relPath } from './definition-file.ts';
import { untrustedFields } from './workflow/input.ts';
import type { StepDefinition, WorkflowDefinition } from './workflow/schema.ts';

const Name = z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]*$/);

/** All conditions of a rule must hold; a rule without conditions always applies. */
const ConditionSchema = z
  .object({
    found: Name.optional().describe(
      "A named pattern matches the input text (an email's subject and body); its match is then `{{found.<name>}}`.",
    ),
    anyKeyword: z
      .array(Name)
      .min(1)
      .optional()
      .describe('Some keyword of one of these lists occurs in the input text.'),
    noKeyword: z.array(Name).min(1).optional().describe('No keyword of these lists occurs in the input text.'),
    failed: z.string().optional().describe('The latest call of this tool in this step returned an error.'),
    absent: z.array(z.string()).min(1).optional().describe('These scope paths have no value (e.g. `data.ticketId`).'),
    text: z
      .string()
      .optional()
      .describe(
        '`found`, `anyKeyword` and `noKeyword` read this scope path (`data.remainingQuery`) instead of the input text.',
      ),
    temperature: z
      .object({
        min: z.number().min(0).max(1).default(0).describe('Lowest temperature the rule holds for.'),
        max: z.number().min(0).max(2).default(2).describe('The rule holds below this temperature.'),
      })
      .strict()
      .optional()
      .describe(
        "The request's sampling temperature is in [min, max) (a consensus sample's): how rules make samples disagree.",
      ),
  })
  .strict();

const RuleSchema = z
  .object({
    when: ConditionSchema.default({}).describe(
      'When the rule applies: every condition given must hold; none given: always.',
    ),
    calls: z
      .array(
        z
          .object({
            tool: z.string().describe("A tool of the step's allow-list."),
            args: z
              .record(z.string(), z.unknown())
              .default({})
              .describe('Its arguments: templates (`{{found.serial}}`).'),
          })
          .strict(),
      )
      .default([])
      .describe('Tool calls to make first, in order, each once.'),
    route: z
      .object({
        next: z.string().describe('A declared edge of the step.'),
        reason: z.string().describe('The route reason (a template).'),
        fields: z.record(z.string(), z.unknown()).default({}).describe("The step's outputs (templates)."),
      })
      .strict()
      .describe('The `route` call that ends the step.'),
  })
  .strict();

/** `statemachines/<workflow>/offline-model.yaml` */
export const OfflineRulesSchema = z
  .object({
    description: z.string().optional().describe('What the rules stand in for.'),
    patterns: z
      .record(Name, z.string())
      .default({})
      .describe('Named regular expressions (case-insensitive); a capture group, if any, is the value.'),
    keywords: z
      .record(Name, z.array(z.string().min(1)).min(1))
      .default({})
      .describe('Named keyword lists, matched case-insensitively on word boundaries.'),
    steps: z
      .record(z.string(), z.array(RuleSchema).min(1))
      .describe('Per LLM step: rules in order; the first whose conditions hold decides.'),
  })
  .strict()
  .meta({ title: 'offline-model.yaml' });

export type OfflineRules = z.infer<typeof OfflineRulesSchema>;
export type OfflineRule = z.infer<typeof RuleSchema>;

export const OFFLINE_RULES_FILE = 'offline-model.yaml';

/**
 * A rule reads what its step sees: untrusted input fields are not under `input` (the step context
 * holds them as `untrusted.<field>`), so a path `input.<untrusted field>` is always empty and the
 * rule never does what it says.
 * @throws DefinitionError naming the rule's field.
 */
function checkPaths(rule: OfflineRule, untrusted: readonly string[], file: string, where: string): void {
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
        throw new DefinitionError(
          file,
          field,
          `${path} is never set: ${name} is untrusted, so the step reads it as untrusted.${path.slice('input.'.length)}`,
        );
    }
}

/**
 * The value a rule votes for in a consensus step must be one the vote counts: a rule that holds at
 * temperature 0 and sets `vote` to another value has every cold sample discarded. (A rule for hot
 * samples only, `temperature.min` above 0, may stand for a model that drifts to an invented value.)
 */
function checkVote(
  rule: OfflineRule,
  step: StepDefinition,
  tools: readonly string[],
  file: string,
  where: string,
): void {
  const { vote, choices } = step.consensus ?? {};
  if (vote === undefined || choices === undefined || (rule.when.temperature?.min ?? 0) > 0) return;
  const value = rule.route.fields[vote];
  if (typeof value !== 'string' || templatePaths(value).length) return;
  const allowed = choices === 'tools' ? tools : choices;
  if (!allowed.includes(value))
    throw new DefinitionError(
      file,
      `${where}.route.fields.${vote}`,
      `"${value}" is not one of the consensus choices (${allowed.join(', ')}): the vote would discard it`,
    );
}

/**
 * Read `offline-model.yaml` from the workflow folder and check it against the workflow: every LLM
 * step has rules, rules name only LLM steps, their routes are declared edges, their calls are
 * tools the step may use, they read only what the step sees and vote only for values counted.
 */
export function loadOfflineRules(def: WorkflowDefinition): OfflineRules {
  const file = join(def.dir, OFFLINE_RULES_FILE);
  const shown = relPath(file);
  if (!existsSync(file))
    throw new DefinitionError(shown, '(file)', 'the offline model needs this file (MODEL_PROVIDER=offline)');
  const rules = checkDefinition(OfflineRulesSchema, readDefinitionYaml(file), shown);
  for (const step of def.steps.filter((s) => s.kind === 'llm'))
    if (!rules.steps[step.name])
      throw new DefinitionError(shown, `steps.${step.name}`, 'missing: every LLM step needs rules');
  for (const [name, stepRules] of Object.entries(rules.steps)) {
    const step = def.steps.find((s) => s.name === name && s.kind === 'llm');
    if (!step) throw new DefinitionError(shown, `steps.${name}`, 'not an LLM step of this workflow');
    stepRules.forEach((rule, i) => {
      checkPaths(rule, untrustedFields(def), shown, `steps.${name}.${i}`);
      checkVote(rule, step, def.manifest.tools, shown, `steps.${name}.${i}`);
      if (!step.next.includes(rule.route.next))
        throw new DefinitionError(
          shown,
          `steps.${name}.${i}.route.next`,
          `"${rule.route.next}" is not a declared edge (${step.next.join(', ')})`,
        );
      rule.calls.forEach((call, j) => {
        if (!step.tools.includes(call.tool))
          throw new DefinitionError(
            shown,
            `steps.${name}.${i}.calls.${j}.tool`,
            `"${call.tool}" is not in the step's tools`,
          );
        for (const arg of Object.keys(call.args))
          if (step.bind[call.tool]?.[arg] !== undefined)
            throw new DefinitionError(
              shown,
              `steps.${name}.${i}.calls.${j}.args.${arg}`,
              `bound from ${step.bind[call.tool]![arg]} by the step: the workflow fills it`,
            );
      });
    });
  }
  return rules;
}
