/**
 * Every kind of definition file, with the zod schema its loader checks it with: the one source of
 * the JSON Schemas editors validate with (`docs/schemas/<name>.schema.json`, `npm run schemas`)
 * and of the reference pages (`docs/reference/`).
 */
import { join } from 'node:path';
import * as z from 'zod';
import { PACKAGE_ROOT } from '../core/paths.ts';
import { EvalCaseSchema } from './eval-cases.ts';
import { AgentConfigSchema } from './lifecycle/agent-config.ts';
import { StatechartFileSchema } from './lifecycle/schema.ts';
import { OfflineRulesSchema } from './offline-model.ts';
import { GuardRulesSchema } from './workflow/guard.ts';
import { ManifestSchema, StepFrontmatterSchema } from './workflow/schema.ts';

/** Where the generated JSON Schemas are kept, in this package. */
export const SCHEMAS_DIR = join(PACKAGE_ROOT, 'docs', 'schemas');

export interface DefinitionKind {
  /** The schema's file name: `docs/schemas/<name>.schema.json`. */
  readonly name: string;
  /** Where such a file lives in a project. */
  readonly path: string;
  readonly schema: z.ZodType;
}

export const DEFINITION_KINDS = [
  { name: 'workflow', path: 'statemachines/<workflow>/workflow.yaml', schema: ManifestSchema },
  {
    name: 'step',
    path: 'statemachines/<workflow>/steps/<step>.md (the YAML frontmatter)',
    schema: StepFrontmatterSchema,
  },
  { name: 'offline-model', path: 'statemachines/<workflow>/offline-model.yaml', schema: OfflineRulesSchema },
  { name: 'eval-case', path: 'statemachines/<workflow>/evals/<case>.yaml', schema: EvalCaseSchema },
  { name: 'guard-rules', path: 'statemachines/<workflow>/guards/<rules>.yaml', schema: GuardRulesSchema },
  { name: 'statechart', path: 'statemachines/<lifecycle>/statechart.yaml', schema: StatechartFileSchema },
  { name: 'agent-config', path: 'statemachines/<lifecycle>/agents/<agent>.json', schema: AgentConfigSchema },
] as const satisfies readonly DefinitionKind[];

export type DefinitionKindName = (typeof DEFINITION_KINDS)[number]['name'];

export const schemaFileName = (name: string) => `${name}.schema.json`;

/**
 * The JSON Schema (draft-07, which every YAML and JSON editor plugin reads) of a kind of
 * definition file, as the file is written: defaults make fields optional.
 */
export function definitionJsonSchema(kind: DefinitionKind): Record<string, unknown> {
  const json = z.toJSONSchema(kind.schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return { ...json, $comment: `${kind.path}. Generated from the zod schema by npm run schemas; do not edit.` };
}
