/**
 * The output guard's definition format: the step option (`guard:` in a step's frontmatter) and the
 * rules file it names (`statemachines/<workflow>/<rules>.yaml`). Any workflow can guard any LLM
 * step; the checks run on the text a tool would send (its `replyArg`, e.g. `send_email`'s `body`)
 * before the tool runs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { DefinitionError } from '../../core/errors.ts';
import { compileExpression, ExpressionError } from '../../core/expressions.ts';
import { checkDefinition, readDefinitionYaml, relPath } from '../definition-file.ts';
import type { StepDefinition, WorkflowDefinition } from './schema.ts';
import { StatePath } from './state-path.ts';

const Id = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lowercase letters, digits and dashes');
const base = {
  id: Id.describe('The check id, unique in the file: violations name it.'),
  message: z
    .string()
    .min(1)
    .optional()
    .describe('What the model is told on a violation, instead of the generated text.'),
};

/** One deterministic check of the rules file. */
export const GuardCheckSchema = z.discriminatedUnion('type', [
  z
    .object({
      ...base,
      type: z.literal('links'),
      allow: z
        .array(z.string().min(1))
        .default([])
        .describe(
          '`links`, `emails`, `phones`: the allowed link hosts (subdomains included), addresses or numbers (compared digit by digit).',
        ),
    })
    .strict(),
  z.object({ ...base, type: z.literal('emails'), allow: z.array(z.string().min(1)).default([]) }).strict(),
  z.object({ ...base, type: z.literal('phones'), allow: z.array(z.string().min(1)).default([]) }).strict(),
  z
    .object({
      ...base,
      type: z.literal('instructions'),
      minWords: z
        .number()
        .int()
        .min(4)
        .default(8)
        .describe(
          '`instructions`: this many words in a row of the step instruction is a leak (also any step or tool name, or a state path).',
        ),
      ignoreSections: z
        .array(z.string())
        .default([])
        .describe('`instructions`: headings of the instruction whose text may be echoed.'),
    })
    .strict(),
  z
    .object({
      ...base,
      type: z.literal('granted'),
      pattern: z
        .string()
        .min(1)
        .describe(
          '`granted`: a regular expression, matched in any case; every match must equal a value read from state (case aside).',
        ),
      from: z
        .array(StatePath)
        .min(1)
        .describe('`granted`: the state paths that hold the granted values (`data.ticketId`).'),
    })
    .strict(),
  z
    .object({
      ...base,
      type: z.literal('deny'),
      patterns: z
        .array(z.string().min(1))
        .min(1)
        .describe('`deny`: case-insensitive regular expressions none of which may appear.'),
    })
    .strict(),
  z
    .object({
      ...base,
      type: z.literal('expression'),
      expression: z
        .string()
        .min(1)
        .describe(
          '`expression`: a CEL expression over text, links, emails, phones, amounts, max_amount, args, data, input that must hold.',
        ),
    })
    .strict(),
  // No run of `minWords` words or `minChars` characters copied from the untrusted input (see `quotedRuns` in
  // src/runtime/steps/guard.ts).
  z
    .object({
      ...base,
      type: z.literal('quotes'),
      minWords: z
        .number()
        .int()
        .min(3)
        .default(8)
        .describe('`quotes`: the shortest run of words, copied in order, that counts as quoting.'),
      minChars: z
        .number()
        .int()
        .min(12)
        .default(40)
        .describe(
          '`quotes`: the shortest run of characters (letters, digits and single spaces) that counts as quoting.',
        ),
      from: z
        .array(StatePath)
        .default([])
        .describe(
          "`quotes`: state written from the untrusted input by earlier steps (`data.issueSummary`): checked like it. The trigger's untrusted fields always are, when the step reads them.",
        ),
      trusted: z
        .array(StatePath)
        .default([])
        .describe(
          '`quotes`: state whose text the reply may repeat even where the untrusted input has it too (a product name from the registry). The step instruction and the fallback always are.',
        ),
    })
    .strict(),
]);

/** A guard rules file. */
export const GuardRulesSchema = z
  .object({
    description: z.string().min(1).describe('What the rules guard.'),
    checks: z
      .array(GuardCheckSchema)
      .min(1)
      .describe('The checks: `links`, `emails`, `phones`, `instructions`, `granted`, `deny` or `expression` objects.'),
    fallback: z
      .string()
      .min(1)
      .describe(
        '`{{placeholder}}` template over `data.*` and `input.*`: what is sent when the model cannot produce a clean text.',
      ),
  })
  .strict()
  .meta({ title: 'guard rules' })
  .superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.checks.forEach((check, i) => {
      if (seen.has(check.id))
        ctx.addIssue({ code: 'custom', path: ['checks', i, 'id'], message: `duplicate check id "${check.id}"` });
      seen.add(check.id);
      const patterns = check.type === 'granted' ? [check.pattern] : check.type === 'deny' ? check.patterns : [];
      for (const p of patterns) {
        try {
          new RegExp(p, 'giu');
        } catch (e) {
          ctx.addIssue({
            code: 'custom',
            path: ['checks', i],
            message: `bad regular expression ${p}: ${(e as Error).message}`,
          });
        }
      }
      if (check.type === 'expression') {
        try {
          compileExpression(check.expression);
        } catch (e) {
          if (!(e instanceof ExpressionError)) throw e;
          ctx.addIssue({ code: 'custom', path: ['checks', i, 'expression'], message: e.message });
        }
      }
    });
  });

export type GuardCheck = z.infer<typeof GuardCheckSchema>;
export type GuardRules = z.infer<typeof GuardRulesSchema>;

const cache = new Map<string, GuardRules>();

/**
 * The rules file of a guarded step, validated (once per process). Also checks that the guarded
 * tools are on the step's allow-list.
 * @throws DefinitionError naming the file and the field.
 */
export function loadGuardRules(def: WorkflowDefinition, step: StepDefinition): GuardRules | undefined {
  const guard = step.guard;
  if (!guard) return undefined;
  if (step.kind !== 'llm')
    throw new DefinitionError(step.file, 'guard', 'only LLM steps are guarded (a code step writes its own text)');
  guard.tools?.forEach((t, i) => {
    if (!step.tools.includes(t))
      throw new DefinitionError(step.file, `guard.tools.${i}`, `"${t}" is not one of the step's tools`);
  });
  const file = join(def.dir, guard.rules);
  const hit = cache.get(file);
  if (hit) return hit;
  if (!existsSync(file)) throw new DefinitionError(step.file, 'guard.rules', `no file ${relPath(file)}`);
  const rules = checkDefinition(GuardRulesSchema, readDefinitionYaml(file), relPath(file));
  cache.set(file, rules);
  return rules;
}
