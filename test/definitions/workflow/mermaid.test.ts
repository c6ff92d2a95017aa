import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../src/core/paths.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { workflowToMermaid } from '../../../src/definitions/workflow/mermaid.ts';
import { DONE } from '../../../src/definitions/workflow/schema.ts';

const FIXTURES = join(PROJECT_ROOT, 'test/fixtures/workflows');

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

  it('draws every declared edge of warranty-email, and nothing else', () => {
    const def = loadWorkflow('warranty-email');
    const text = workflowToMermaid(def);
    const id = (s: string) => (s === DONE ? '[*]' : `s_${s.replaceAll('-', '_')}`);
    const expected = [`[*] --> ${id(def.manifest.entry)}`];
    for (const step of def.steps) for (const next of step.next) expected.push(`${id(step.name)} --> ${id(next)}`);
    const arrows = text
      .split('\n')
      .filter((l) => l.includes('-->'))
      .map((l) => l.trim());
    expect(arrows).toEqual(expected);
    expect(arrows).toContain('s_02_check_warranty --> s_03a_valid_warranty');
    expect(text).toContain('state "04-out-of-scope (code: out-of-scope) [fallback]" as s_04_out_of_scope');
    expect(text).toContain('state "02-check-warranty (code: check-warranty)" as s_02_check_warranty');
  });

  it('draws a checkpoint with a `when` output as conditional, one without as unconditional', () => {
    const def = loadWorkflow('investigation');
    const lines = (d: typeof def) =>
      workflowToMermaid(d)
        .split('\n')
        .filter((l) => l.includes('s_03_record --> s_02_investigate'));
    expect(lines(def)).toEqual(['    s_03_record --> s_02_investigate : after checkpoint if checkpoint_required']);
    const always = {
      ...def,
      steps: def.steps.map((s) => (s.pause ? { ...s, pause: { ...s.pause, when: undefined } } : s)),
    };
    expect(lines(always)).toEqual(['    s_03_record --> s_02_investigate : after checkpoint']);
  });
});
