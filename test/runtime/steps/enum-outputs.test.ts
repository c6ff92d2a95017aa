/**
 * Outputs declared with `enum` (and `routes`): the route check normalises a value that differs only
 * in case or spaces, refuses any other, and, with `routes`, requires the output and refuses a route
 * it does not allow; the prompt lists the values; the single-prompt step drops the ties.
 */
import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import type { StepDefinition } from '../../../src/definitions/workflow/schema.ts';
import { routeSchema, routeToolSpec, systemPrompt } from '../../../src/runtime/contracts/prompt.ts';
import { singlePromptStep } from '../../../src/runtime/steps/single-prompt.ts';

const step = (outputs: StepDefinition['outputs']): StepDefinition => ({
  name: '04-decide',
  description: 'Decides.',
  version: '1.0.0',
  kind: 'llm',
  next: ['05-more', '06-answer'],
  tools: [],
  expects: [],
  requires: [],
  outputs,
  bind: {},
  readsUntrusted: false,
  temperature: 0,
  promptFiles: [],
  instruction: 'Decide.',
  file: 'steps/04-decide.md',
});
const field = { type: 'string' as const, description: 'The decision.', pii: false };
const free = step({ mood: { ...field, enum: ['calm', 'angry'] } });
const tied = step({
  action: { ...field, enum: ['more', 'done'], routes: { more: ['05-more'], done: ['06-answer'] } },
});

describe('enum outputs in the route check', () => {
  it('normalises case and spaces to the declared value, refuses other values, and keeps the output optional', () => {
    const schema = routeSchema(free);
    expect(schema.parse({ next: '05-more', reason: 'r', mood: ' Calm ' })).toMatchObject({ mood: 'calm' });
    expect(schema.safeParse({ next: '05-more', reason: 'r', mood: 'sad' }).success).toBe(false);
    expect(schema.safeParse({ next: '05-more', reason: 'r', mood: 3 }).success).toBe(false);
    expect(schema.parse({ next: '05-more', reason: 'r' })).not.toHaveProperty('mood');
  });

  it('with routes: the output is required and must allow the route taken', () => {
    const schema = routeSchema(tied);
    expect(schema.parse({ next: '06-answer', reason: 'r', action: 'DONE' })).toMatchObject({ action: 'done' });
    const against = schema.safeParse({ next: '05-more', reason: 'r', action: 'done' });
    expect(against.error?.issues).toEqual([
      expect.objectContaining({ path: ['action'], message: '"done" routes to 06-answer, not to 05-more' }),
    ]);
    expect(schema.safeParse({ next: '05-more', reason: 'r' }).success).toBe(false);
  });

  it('shows the model the values, in the route tool and in the protocol', () => {
    const json = routeToolSpec(tied).inputSchema.json as { properties: Record<string, unknown>; required: string[] };
    expect(json.properties.action).toMatchObject({ enum: ['more', 'done'] });
    expect(json.required).toContain('action');
    expect((systemPrompt(tied)[1] as { text: string }).text).toContain('- `action` (more | done): The decision.');
  });

  it('drops the ties to routes in the single-prompt step, whose only route is DONE', () => {
    const def = loadWorkflow('consensus-pick');
    const whole = singlePromptStep(def);
    expect(whole.outputs.action).toMatchObject({ enum: ['continue', 'done', 'ask'] });
    expect(whole.outputs.action!.routes).toBeUndefined();
    expect(routeSchema(whole).safeParse({ next: 'DONE', reason: 'r', action: 'continue' }).success).toBe(true);
  });
});
