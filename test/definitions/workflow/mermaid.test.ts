import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { workflowToMermaid } from '../../../src/definitions/workflow/mermaid.ts';
import { DONE } from '../../../src/definitions/workflow/schema.ts';
import { FIXTURE_WORKFLOWS as FIXTURES } from '../../fixtures/triage-plugin.ts';
import { FIXTURE_STATEMACHINES } from '../../support/fixture-project.ts';

describe('workflowToMermaid', () => {
  it('renders the fixture workflow exactly', () => {
    expect(workflowToMermaid(loadWorkflow('triage', FIXTURES))).toBe(`stateDiagram-v2
    state "a-intake (LLM)" as s_a_intake
    state "b-lookup (code: lookup)" as s_b_lookup
    state "c-clarify (LLM)" as s_c_clarify
    state "d-answer (LLM)" as s_d_answer
    state "z-fallback (code: fallback) [fallback]" as s_z_fallback
    [*] --> s_a_intake
    s_a_intake --> s_b_lookup
    s_a_intake --> s_c_clarify
    s_a_intake --> s_z_fallback
    s_b_lookup --> s_d_answer
    s_b_lookup --> s_c_clarify
    s_c_clarify --> s_c_clarify
    s_c_clarify --> s_b_lookup
    s_c_clarify --> [*]
    s_d_answer --> [*]
    s_z_fallback --> [*]
    note right of s_z_fallback : fallback - undeclared routes and caught errors
    classDef llm fill:#e8f0fe,stroke:#1a73e8
    classDef code fill:#e6f4ea,stroke:#188038
    classDef fallback fill:#fce8e6,stroke:#d93025,stroke-width:3px
    class s_a_intake,s_c_clarify,s_d_answer llm
    class s_b_lookup code
    class s_z_fallback fallback
`);
  });

  it('draws every declared edge of a workflow (case-desk of the fixture project), and nothing else', () => {
    const def = loadWorkflow('case-desk', FIXTURE_STATEMACHINES);
    const text = workflowToMermaid(def);
    const id = (s: string) => (s === DONE ? '[*]' : `s_${s.replaceAll('-', '_')}`);
    const expected = [`[*] --> ${id(def.manifest.entry)}`];
    for (const step of def.steps) for (const next of step.next) expected.push(`${id(step.name)} --> ${id(next)}`);
    const arrows = text
      .split('\n')
      .filter((l) => l.includes('-->'))
      .map((l) => l.trim());
    expect(arrows).toEqual(expected);
    expect(arrows).toContain('s_02_look_up --> s_03a_open_case');
    expect(text).toContain('state "04-hand-off (code: hand-off) [fallback]" as s_04_hand_off');
    expect(text).toContain('state "02-look-up (code: look-up)" as s_02_look_up');
  });

  it('draws a checkpoint with a `when` output as conditional, one without as unconditional', () => {
    const def = loadWorkflow('checkpoint-review', FIXTURE_STATEMACHINES);
    const lines = (d: typeof def) =>
      workflowToMermaid(d)
        .split('\n')
        .filter((l) => l.includes('s_03_record --> s_02_review'));
    expect(lines(def)).toEqual(['    s_03_record --> s_02_review : after checkpoint if checkpoint_required']);
    const always = {
      ...def,
      steps: def.steps.map((s) => (s.pause ? { ...s, pause: { ...s.pause, when: undefined } } : s)),
    };
    expect(lines(always)).toEqual(['    s_03_record --> s_02_review : after checkpoint']);
  });
});
