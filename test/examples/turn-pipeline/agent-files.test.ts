/** The turn pipeline's data files are checked by schema; every problem names the file and the field. */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentDir, loadAgent } from '../../../lambdas/workflows/turn-pipeline/agent.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';

const def = loadWorkflow('turn-pipeline');
const tools = def.manifest.tools;

/** A copy of the agent folder with one file's text changed. */
function broken(file: string, edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-'));
  cpSync(agentDir(def.dir), dir, { recursive: true });
  writeFileSync(join(dir, file), edit(readFileSync(join(dir, file), 'utf8')));
  return dir;
}

describe('the example agent', () => {
  it('loads: rules of every scope with real constraints, scenarios, profile fields, both configs', () => {
    const agent = loadAgent(agentDir(def.dir), tools);
    expect(new Set(agent.rules.map((r) => r.scope))).toEqual(new Set(['GLOBAL', 'SCENARIO', 'STEP']));
    expect(agent.rules.find((r) => r.id === 'refund-limit')).toMatchObject({
      scope: 'GLOBAL',
      is_hard_constraint: true,
      enforcement_expression: expect.stringContaining('response.max_amount <= 50'),
    });
    expect(agent.rules.find((r) => r.id === 'no-competitor')!.action_text).toMatch(/MegaMart/);
    expect(agent.scenarios.map((s) => s.intent_label)).toEqual(['refund_request', 'track_order', 'ask_price']);
    expect(agent.profileFields.map((f) => f.field_name)).toEqual([
      'country',
      'email',
      'preferred_language',
      'is_member',
    ]);
    expect(agent.scenarioFilter).toMatchObject({
      stickiness_boost: 0.15,
      exit_intent_threshold: 0.85,
      fallback_behavior: 'clarify',
      max_clarifications_per_step: 2,
    });
    expect(agent.enforcement).toMatchObject({
      max_retries: 1,
      always_enforce_global: true,
      relevance_refusal_bypass: true,
    });
  });

  it.each([
    [
      'rules.yaml',
      (t: string) =>
        t.replace(
          'scope: GLOBAL\n    is_hard_constraint: true\n    enforcement_expression: response.max_amount',
          'scope: GALACTIC\n    is_hard_constraint: true\n    enforcement_expression: response.max_amount',
        ),
      /rules\.yaml: rules\.0\.scope: /,
    ],
    [
      'rules.yaml',
      (t: string) => t.replace('response.max_amount <= 50 ||', 'response.max_amount <= ||'),
      /rules\.yaml: rules\.0\.enforcement_expression: /,
    ],
    [
      'rules.yaml',
      (t: string) =>
        t.replace(
          'scope_id: refund\n    attached_tool_ids: [lookup_order]',
          'scope_id: refunds\n    attached_tool_ids: [lookup_order]',
        ),
      /rules\.yaml: rules\.5\.scope_id: no scenario "refunds"/,
    ],
    [
      'rules.yaml',
      (t: string) => t.replace('attached_tool_ids: [lookup_order]', 'attached_tool_ids: [issue_refund]'),
      /rules\.yaml: rules\.5\.attached_tool_ids\.0: not a tool of the workflow/,
    ],
    [
      'scenarios.yaml',
      (t: string) => t.replace('{ to: submitted,', '{ to: nowhere,'),
      /scenarios\.yaml: scenarios\.0\.steps\.1\.transitions\.0\.to: no step "nowhere"/,
    ],
    [
      'scenario-filter.yaml',
      (t: string) => t.replace('fallback_behavior: clarify', 'fallback_behavior: panic'),
      /scenario-filter\.yaml: fallback_behavior: /,
    ],
    [
      'enforcement.yaml',
      (t: string) => t.replace('max_retries: 1', 'max_retries: 9'),
      /enforcement\.yaml: max_retries: /,
    ],
    [
      'profile-fields.yaml',
      (t: string) => t.replace('field_type: string', 'field_type: date'),
      /profile-fields\.yaml: profile_fields\.0\.field_type: /,
    ],
  ])('refuses a broken %s with the file and the field', (file, edit, message) => {
    expect(() => loadAgent(broken(file, edit), tools)).toThrow(message);
  });
});
