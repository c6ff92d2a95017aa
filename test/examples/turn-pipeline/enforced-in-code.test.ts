/**
 * What the turn pipeline decides in code, not by the model: the ambiguity exit whatever the extraction routed,
 * profile schema versions with migration of stored profiles, profile-field definitions in the
 * extraction prompt, and the intent of every turn as an EMF metric.
 */
import { describe, expect, it } from 'vitest';
import { agentDir, loadAgent } from '../../../lambdas/workflows/turn-pipeline/agent.ts';
import { ambiguity, applyRuleFilter } from '../../../lambdas/workflows/turn-pipeline/pipeline.ts';
import { newSession, SessionSchema } from '../../../lambdas/workflows/turn-pipeline/session.ts';
import { migrateProfile } from '../../../lambdas/workflows/turn-pipeline/turn.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { systemPrompt } from '../../../src/runtime/contracts/prompt.ts';
import type { StepInput } from '../../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import { createHandler } from '../../../src/runtime/step-handler/handler.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';
import { dimensionsOf, useEmfCapture, valuesOf } from '../../runtime/observability/emf.ts';

const def = loadWorkflow('turn-pipeline');
const agent = loadAgent(agentDir(def.dir), def.manifest.tools);
const ctx = (isAmbiguous: boolean, intentConfidence: number) => ({
  entities: {},
  detectedIntent: 'other',
  intentConfidence,
  isAmbiguous,
});

describe('the ambiguity exit, decided by code', () => {
  it('clarifies a flagged message or one below min_intent_confidence, whatever route the model chose', () => {
    expect(agent.scenarioFilter.min_intent_confidence).toBe(0.25);
    expect(ambiguity(ctx(true, 0.9), 0.25)).toBe('the message is flagged ambiguous');
    expect(ambiguity(ctx(false, 0.1), 0.25)).toBe('intent confidence 0.1 is below 0.25');
    expect(ambiguity(ctx(false, 0.3), 0.25)).toBeUndefined();
  });
});

describe('the LLM rule filter (05a-rule-filter)', () => {
  const selection = {
    matched: ['return-window', 'return-label', 'rate-conversation'],
    enforce: ['refund-limit'],
    suppressed: [],
  };
  it('drops the matched rules it says do not apply, keeps the ones it says nothing about, and never touches enforcement', () => {
    expect(applyRuleFilter(selection, { 'return-window': false, 'return-label': true })).toEqual({
      selection: { matched: ['return-label', 'rate-conversation'], enforce: ['refund-limit'], suppressed: [] },
      dropped: ['return-window'],
    });
    expect(applyRuleFilter(selection, 'garbage').dropped).toEqual([]);
    expect(applyRuleFilter(selection, { 'refund-limit': false }).selection.enforce).toEqual(['refund-limit']);
  });
});

describe('profile schema versions', () => {
  it("migrates a version 1 profile to the agent's version: renamed and dropped fields, the rest kept", () => {
    expect(agent.profileSchemaVersion).toBe(2);
    const { profile, migrated } = migrateProfile(
      { language: 'German', phone: '+49 30 1234', country: 'DE' },
      1,
      2,
      agent.profileMigrations,
    );
    expect(profile).toEqual({ preferred_language: 'German', country: 'DE' });
    expect(migrated).toEqual({ from: 1, to: 2, renamed: ['language→preferred_language'], dropped: ['phone'] });
  });

  it('leaves a current or newer profile as it is', () => {
    expect(migrateProfile({ country: 'DE' }, 2, 2, agent.profileMigrations)).toEqual({ profile: { country: 'DE' } });
    expect(migrateProfile({ loyalty_tier: 'gold' }, 3, 2, agent.profileMigrations)).toEqual({
      profile: { loyalty_tier: 'gold' },
    });
  });

  it('reads sessions saved before versioning as version 1', () => {
    const { profileSchemaVersion: _, ...old } = newSession('s-old');
    expect(SessionSchema.parse(old).profileSchemaVersion).toBe(1);
  });
});

describe('profile-field definitions in the extraction prompt', () => {
  it("puts every field with its description and extraction hints in 02-extract-context's system prompt", () => {
    const step = def.steps.find((s) => s.name === '02-extract-context')!;
    const prompt = systemPrompt(step)
      .flatMap((b) => ('text' in b ? [b.text] : []))
      .join('\n');
    for (const f of agent.profileFields) {
      expect(prompt).toContain(`"field_name": "${f.field_name}"`);
      expect(prompt).toContain(JSON.stringify(f.description));
      for (const hint of f.extraction_hints) expect(prompt).toContain(JSON.stringify(hint));
    }
  });
});

describe('the intent of every turn as a metric', () => {
  const emf = useEmfCapture();

  it("10-persist counts the turn's intent as TurnIntent, a value outside the declared list as other", async () => {
    const plugin = await loadPlugin('turn-pipeline');
    const toolbox: Toolbox = {
      spec: (name) => plugin.tools[name],
      execute: async (tool, args) => ({
        tool,
        args: args as Record<string, unknown>,
        result: { session: { ...newSession('s-m'), version: 1 } },
      }),
    };
    const handler = createHandler(
      {
        WORKFLOW: 'turn-pipeline',
        STEP: '10-persist',
        POWERTOOLS_METRICS_DISABLED: 'false',
        POWERTOOLS_SERVICE_NAME: 'turn-pipeline',
      },
      { toolbox, events: memoryEventLog() },
    );
    const input = (intent: string): StepInput => ({
      workflow: 'turn-pipeline',
      step: '10-persist',
      input: { sessionId: 's-m', message: 'I want a refund' },
      previous: {
        step: '09-enforce',
        next: '10-persist',
        reason: 'passed',
        decidedBy: 'code',
        fields: {},
        data: {
          session: newSession('s-m'),
          detectedIntent: intent,
          intentConfidence: 0.9,
          reply: 'OK',
          outcome: 'answered',
        },
        count: 9,
      },
      error: null,
      count: 10,
      execution: { id: 'arn:aws:states:us-east-1:123456789012:execution:tp:e1', name: 'e1' },
    });
    await handler(input('refund_request'));
    await handler(input('order_pizza'));
    const intents = emf.lines().filter((l) => 'TurnIntent' in l);
    expect(intents.map(valuesOf)).toEqual([{ TurnIntent: 1 }, { TurnIntent: 1 }]);
    expect(intents.map(dimensionsOf)).toEqual([
      { service: 'turn-pipeline', workflow: 'turn-pipeline', step: '10-persist', value: 'refund_request' },
      { service: 'turn-pipeline', workflow: 'turn-pipeline', step: '10-persist', value: 'other' },
    ]);
  });
});
