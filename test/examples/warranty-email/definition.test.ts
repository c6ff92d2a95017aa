/** The warranty example's definition: its steps, entry, trigger, local registry and the one step that binds. */
import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';

describe('the warranty-email definition', () => {
  it('warranty-email has its eight steps (01 to 05), entry 01 and a max of 10 steps', () => {
    const def = loadWorkflow('warranty-email');
    expect(def.steps.map((s) => s.name.split('-')[0])).toEqual(['01', '02', '03a', '03b', '03c', '03d', '04', '05']);
    expect(def.manifest.entry).toBe('01-extract-serial');
    expect(def.manifest.maxSteps).toBe(10);
    // The step that reads the untrusted email has no tools at all, so it cannot send mail.
    expect(def.steps[0]!.tools).toEqual([]);
    // It starts from email; locally the registry is a file of the workflow folder.
    expect(def.manifest.triggers).toEqual([{ type: 'email' }]);
    expect(def.manifest.local.env).toEqual({ WARRANTY_REGISTRY_FILE: 'registry.json' });
    // The ticket is for the device step 02 checked: 03a binds the serial and the product.
    expect(def.steps.find((s) => s.name === '03a-valid-warranty')!.bind).toEqual({
      create_ticket: { serialNumber: 'data.warranty.serialNumber', product: 'data.warranty.product' },
    });
    expect(def.steps.filter((s) => Object.keys(s.bind).length).map((s) => s.name)).toEqual(['03a-valid-warranty']);
  });
});
