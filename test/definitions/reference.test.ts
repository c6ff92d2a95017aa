import { describe, expect, it } from 'vitest';
import { DEFINITION_KINDS } from '../../src/definitions/kinds.ts';
import { referenceTable } from '../../src/definitions/reference.ts';

describe('the reference table of a step file', () => {
  const step = referenceTable(DEFINITION_KINDS.find((k) => k.name === 'step')!);

  it("lists an output's type with its values", () => {
    expect(step).toContain('| `outputs.<name>.type` | `string` \\| `number` \\| `boolean` \\| `object` |');
  });
});
