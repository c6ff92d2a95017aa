import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { DefinitionError } from '../../src/core/errors.ts';
import { checkDefinition } from '../../src/definitions/definition-file.ts';
import { issueText } from '../../src/definitions/issue-text.ts';

const Manifest = z.strictObject({
  name: z.string(),
  fallback: z.string(),
  model: z.strictObject({ id: z.string() }).optional(),
});

const problemOf = (value: unknown) => {
  try {
    checkDefinition(Manifest, value, 'workflow.yaml');
  } catch (e) {
    return (e as DefinitionError).message;
  }
  return 'no problem';
};

describe('a definition problem in a user’s words', () => {
  it('names a missing required field, not zod’s "received undefined"', () => {
    expect(problemOf({ name: 'w' })).toBe('workflow.yaml: fallback: missing field `fallback`');
  });

  it('names the object that lacks a nested field', () => {
    expect(problemOf({ name: 'w', fallback: 'x', model: {} })).toBe('workflow.yaml: model.id: missing field `id`');
  });

  it('keeps zod’s words for a value of the wrong type', () => {
    const parsed = Manifest.safeParse({ name: 3, fallback: 'x' });
    expect(issueText(parsed.error!.issues[0]!)).toEqual({
      path: 'name',
      message: 'Invalid input: expected string, received number',
      within: 'name',
    });
  });
});
