/** The example project's definitions: every example workflow of this repository loads. */
import { describe, expect, it } from 'vitest';
import { listWorkflows, loadWorkflow } from '../../src/definitions/workflow/loader.ts';

describe('the project definitions', () => {
  it('every workflow under statemachines/ loads and validates', () => {
    const names = listWorkflows();
    expect(names).toContain('warranty-email');
    for (const name of names) expect(() => loadWorkflow(name)).not.toThrow();
  });
});
