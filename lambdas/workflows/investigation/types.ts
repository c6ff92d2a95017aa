import { join } from 'node:path';
import type { WorkflowDefinition } from 'stepwise';
import { checkDefinition, InvalidInputError, readDefinitionYaml, relPath } from 'stepwise';
import { type InvestigationType, TypesFileSchema } from './rules.ts';

/**
 * The investigation type of an input, from `types.yaml` of the workflow folder. @throws InvalidInputError for an
 * unknown type
 */
export function investigationType(def: WorkflowDefinition, name: string): InvestigationType {
  const file = join(def.dir, 'types.yaml');
  const { types } = checkDefinition(TypesFileSchema, readDefinitionYaml(file), relPath(file));
  const type = types[name];
  if (!type)
    throw new InvalidInputError(`unknown investigation type "${name}" (known: ${Object.keys(types).join(', ')})`);
  return type;
}
