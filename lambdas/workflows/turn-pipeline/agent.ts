/**
 * The turn pipeline's agent definition: rules, scenarios, profile fields, enforcement
 * and scenario-filter config, each a YAML file of `statemachines/turn-pipeline/agent/` checked
 * against the schemas below. Field names are snake_case, as the agent's YAML files write them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkDefinition,
  compileExpression,
  DefinitionError,
  ExpressionError,
  readDefinitionYaml,
  relPath,
} from 'stepwise';
import * as z from 'zod';

const Id = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'lowercase letters, digits, _ and -');

/**
 * One rule: matched by `condition_text` (and `intents`), its `action_text` goes into generation, hard ones are
 * enforced.
 */
export const RuleSchema = z
  .object({
    id: Id,
    condition_text: z
      .string()
      .min(1)
      .describe('When the rule applies, in words (matched by similarity against the turn).'),
    action_text: z
      .string()
      .min(1)
      .describe(
        'What the agent must do or not do; in the generation prompt, and judged by lane 2 when there is no expression.',
      ),
    scope: z.enum(['GLOBAL', 'SCENARIO', 'STEP']),
    scope_id: z
      .string()
      .regex(/^[a-z0-9_-]+(\/[a-z0-9_-]+)?$/)
      .optional()
      .describe('SCENARIO: the scenario id; STEP: `<scenario>/<step>`.'),
    is_hard_constraint: z.boolean().default(false),
    enforcement_expression: z
      .string()
      .min(1)
      .optional()
      .describe('CEL over { profile, session, response }: must hold for the response to go out (lane 1).'),
    attached_tool_ids: z.array(z.string().regex(/^[a-z][a-z0-9_]*$/)).default([]),
    priority: z.number().int().default(0),
    enabled: z.boolean().default(true),
    max_fires_per_session: z.number().int().min(0).default(0).describe('0: unlimited.'),
    cooldown_turns: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Turns after a fire during which the rule does not fire again.'),
    intents: z
      .array(z.string())
      .default([])
      .describe('Detected intents that match the rule outright (besides similarity).'),
  })
  .strict()
  .superRefine((rule, ctx) => {
    if ((rule.scope === 'GLOBAL') !== (rule.scope_id === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['scope_id'],
        message: rule.scope === 'GLOBAL' ? 'a GLOBAL rule has no scope_id' : `a ${rule.scope} rule needs a scope_id`,
      });
    if (rule.scope === 'STEP' && !rule.scope_id?.includes('/'))
      ctx.addIssue({ code: 'custom', path: ['scope_id'], message: 'a STEP rule names <scenario>/<step>' });
    if (rule.enforcement_expression) {
      try {
        compileExpression(rule.enforcement_expression);
      } catch (e) {
        if (!(e instanceof ExpressionError)) throw e;
        ctx.addIssue({ code: 'custom', path: ['enforcement_expression'], message: e.message });
      }
    }
  });

const TransitionSchema = z
  .object({
    to: z.union([Id, z.literal('END')]).describe('A step of the same scenario, or `END` (the scenario is complete).'),
    intents: z
      .array(z.string())
      .default([])
      .describe('Detected intents that take this transition (score = intent confidence).'),
    examples: z.array(z.string().min(1)).default([]).describe('Phrases that take it (score = similarity).'),
  })
  .strict();

const ScenarioStepSchema = z
  .object({
    id: Id,
    instruction: z.string().min(1).describe('What the agent does at this step (in the generation prompt).'),
    say: z
      .string()
      .min(1)
      .describe(
        'What the agent says at this step in its simplest form (a model rephrases it; the offline stand-in says it as is).',
      ),
    transitions: z.array(TransitionSchema).default([]),
  })
  .strict();

export const ScenarioSchema = z
  .object({
    id: Id,
    intent_label: z
      .string()
      .min(1)
      .describe("The business label of the scenario's intent (observability, and intent matching)."),
    entry_examples: z.array(z.string().min(1)).min(1),
    entry_step: Id,
    steps: z.array(ScenarioStepSchema).min(1),
  })
  .strict()
  .superRefine((s, ctx) => {
    const ids = new Set(s.steps.map((st) => st.id));
    if (!ids.has(s.entry_step))
      ctx.addIssue({ code: 'custom', path: ['entry_step'], message: `no step "${s.entry_step}"` });
    s.steps.forEach((st, i) =>
      st.transitions.forEach((t, j) => {
        if (t.to !== 'END' && !ids.has(t.to))
          ctx.addIssue({ code: 'custom', path: ['steps', i, 'transitions', j, 'to'], message: `no step "${t.to}"` });
      }),
    );
  });

export const ProfileFieldSchema = z
  .object({
    field_name: z.string().regex(/^[a-z][a-z0-9_]*$/),
    description: z.string().min(1),
    field_type: z.enum(['string', 'number', 'boolean']),
    extraction_hints: z.array(z.string()).default([]),
  })
  .strict();

/** One step of the profile schema: what changes for a stored profile of version `to - 1`. */
export const ProfileMigrationSchema = z
  .object({
    to: z.number().int().min(2).describe('The schema version this migration produces (from the one before it).'),
    rename: z
      .record(z.string(), z.string().regex(/^[a-z][a-z0-9_]*$/))
      .default({})
      .describe('Old field name → new field name.'),
    drop: z.array(z.string()).default([]).describe('Fields no longer kept.'),
  })
  .strict();

/** `profile-fields.yaml`: the fields, the schema version they make, and how older stored profiles migrate. */
const ProfileFileSchema = z
  .object({
    schema_version: z
      .number()
      .int()
      .min(1)
      .default(1)
      .describe('Bump when the fields change; stored sessions migrate on their next turn.'),
    profile_fields: z.array(ProfileFieldSchema),
    migrations: z.array(ProfileMigrationSchema).default([]),
  })
  .strict()
  .superRefine((f, ctx) => {
    const expected = Array.from({ length: f.schema_version - 1 }, (_, i) => i + 2);
    const got = f.migrations.map((m) => m.to);
    if (JSON.stringify(got) !== JSON.stringify(expected))
      ctx.addIssue({
        code: 'custom',
        path: ['migrations'],
        message: `one migration per version up to schema_version, in order: to ${expected.join(', ') || '(none)'} (got ${got.join(', ') || 'none'})`,
      });
  });

export const EnforcementConfigSchema = z
  .object({
    enabled: z.boolean().default(true),
    max_retries: z.number().int().min(0).max(3).default(1),
    deterministic_enabled: z.boolean().default(true),
    llm_judge_enabled: z.boolean().default(true),
    judge_combine: z
      .enum(['all', 'majority', 'any'])
      .default('all')
      .describe(
        'How the verdicts of several judge models (08-judge `models`) combine per rule: every judge passes it, more than half, or at least one.',
      ),
    missing_verdict: z
      .enum(['fail', 'pass'])
      .default('fail')
      .describe(
        'A judged rule with no verdict, or one that does not parse as { passed: boolean }: `fail` (a violation: regenerate, then the fallback) or `pass` (recorded, not a violation).',
      ),
    grounding_check_enabled: z
      .boolean()
      .default(true)
      .describe(
        'The judge also checks that every factual claim of the response is backed by tool results or retrieved guidance (check `grounding`).',
      ),
    grounding_threshold: z
      .number()
      .min(0)
      .max(1)
      .default(0.75)
      .describe('A grounding verdict with a `score` passes at this score or above.'),
    always_enforce_global: z.boolean().default(true),
    relevance_check_enabled: z.boolean().default(true),
    relevance_threshold: z.number().min(0).max(1).default(0.05),
    relevance_refusal_bypass: z.boolean().default(true),
    refusal_phrases: z
      .array(z.string().min(1))
      .default([
        "i don't know",
        'i cannot answer',
        "i'm not able to",
        'outside my capabilities',
        "i don't have that information",
        "i can't help with",
      ]),
    fallback_template: z
      .string()
      .min(1)
      .describe('Sent when no response passes enforcement after max_retries regenerations.'),
  })
  .strict();

export const ScenarioFilterConfigSchema = z
  .object({
    enabled: z.boolean().default(true),
    stickiness_boost: z.number().min(0).max(1).default(0.15),
    exit_intent_threshold: z.number().min(0).max(1).default(0.85),
    fallback_behavior: z.enum(['clarify', 'stay', 'escalate']).default('clarify'),
    max_clarifications_per_step: z.number().int().min(0).default(2),
    min_transition_score: z.number().min(0).max(1).default(0.3),
    example_weight: z
      .number()
      .min(0)
      .max(1)
      .default(0.7)
      .describe(
        "A scenario's score is the intent confidence when the extraction named its intent_label, else its best entry-example similarity times this: examples alone do not make a confident exit.",
      ),
    min_entry_score: z
      .number()
      .min(0)
      .max(1)
      .default(0.35)
      .describe('A scenario is entered from none only at this score or above.'),
    min_intent_confidence: z
      .number()
      .min(0)
      .max(1)
      .default(0.25)
      .describe(
        'The ambiguity exit, enforced by code: a turn whose intent confidence is below this (or flagged ambiguous) is asked to clarify, whatever route the extraction chose.',
      ),
    rule_match_threshold: z
      .number()
      .min(0)
      .max(1)
      .default(0.3)
      .describe("Similarity at which a rule's condition_text matches the turn."),
    llm_rule_filter: z
      .boolean()
      .default(true)
      .describe(
        'The LLM rule filter: after matching, a model call (05a-rule-filter) decides which matched rules truly apply; off, every matched rule applies. GLOBAL hard constraints stay enforced either way.',
      ),
    clarification_prefix: z.string().min(1).default("Sorry, I didn't quite catch that."),
    escalation_message: z
      .string()
      .min(1)
      .default("I'm handing this conversation to a colleague who can help further; they will reply here shortly."),
  })
  .strict();

export type Rule = z.infer<typeof RuleSchema>;
export type Scenario = z.infer<typeof ScenarioSchema>;
export type ProfileField = z.infer<typeof ProfileFieldSchema>;
export type ProfileMigration = z.infer<typeof ProfileMigrationSchema>;
export type EnforcementConfig = z.infer<typeof EnforcementConfigSchema>;
export type ScenarioFilterConfig = z.infer<typeof ScenarioFilterConfigSchema>;

export interface Agent {
  rules: Rule[];
  scenarios: Scenario[];
  profileFields: ProfileField[];
  /** The profile schema version of `profileFields`; `profileMigrations` lead stored profiles to it. */
  profileSchemaVersion: number;
  profileMigrations: ProfileMigration[];
  enforcement: EnforcementConfig;
  scenarioFilter: ScenarioFilterConfig;
}

const FILES = {
  rules: ['rules.yaml', z.object({ rules: z.array(RuleSchema) }).strict()],
  scenarios: ['scenarios.yaml', z.object({ scenarios: z.array(ScenarioSchema) }).strict()],
  profileFields: ['profile-fields.yaml', ProfileFileSchema],
  enforcement: ['enforcement.yaml', EnforcementConfigSchema],
  scenarioFilter: ['scenario-filter.yaml', ScenarioFilterConfigSchema],
} as const;

function read<T>(dir: string, file: string, schema: z.ZodType<T>): T {
  const path = join(dir, file);
  if (!existsSync(path)) throw new DefinitionError(relPath(path), '(file)', 'not found');
  return checkDefinition(schema, readDefinitionYaml(path), relPath(path));
}

const cache = new Map<string, Agent>();

/**
 * Load and check the agent folder (once per process): each file against its schema, then the
 * references between them (unique ids, rule scope ids that exist, tools the workflow has).
 * @throws DefinitionError naming the file and the field.
 */
export function loadAgent(dir: string, tools: readonly string[]): Agent {
  const hit = cache.get(dir);
  if (hit) return hit;
  const profile = read(dir, FILES.profileFields[0], FILES.profileFields[1]);
  const agent: Agent = {
    rules: read(dir, FILES.rules[0], FILES.rules[1]).rules,
    scenarios: read(dir, FILES.scenarios[0], FILES.scenarios[1]).scenarios,
    profileFields: profile.profile_fields,
    profileSchemaVersion: profile.schema_version,
    profileMigrations: profile.migrations,
    enforcement: read(dir, FILES.enforcement[0], FILES.enforcement[1]),
    scenarioFilter: read(dir, FILES.scenarioFilter[0], FILES.scenarioFilter[1]),
  };
  const rulesFile = relPath(join(dir, FILES.rules[0]));
  const seen = new Set<string>();
  agent.rules.forEach((rule, i) => {
    if (seen.has(rule.id)) throw new DefinitionError(rulesFile, `rules.${i}.id`, `duplicate rule id "${rule.id}"`);
    seen.add(rule.id);
    const [scenario, step] = (rule.scope_id ?? '').split('/');
    const s = agent.scenarios.find((x) => x.id === scenario);
    if (rule.scope !== 'GLOBAL' && !s)
      throw new DefinitionError(rulesFile, `rules.${i}.scope_id`, `no scenario "${scenario}"`);
    if (rule.scope === 'STEP' && !s!.steps.some((x) => x.id === step))
      throw new DefinitionError(rulesFile, `rules.${i}.scope_id`, `scenario "${scenario}" has no step "${step}"`);
    rule.attached_tool_ids.forEach((t, j) => {
      if (!tools.includes(t))
        throw new DefinitionError(
          rulesFile,
          `rules.${i}.attached_tool_ids.${j}`,
          `not a tool of the workflow (${tools.join(', ')})`,
        );
    });
  });
  cache.set(dir, agent);
  return agent;
}

/** The agent folder of a workflow folder. */
export const agentDir = (workflowDir: string): string => join(workflowDir, 'agent');
