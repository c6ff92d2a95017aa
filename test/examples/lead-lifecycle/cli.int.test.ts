/** The lead lifecycle example's own command: `stepwise lead`, its project's alias of `stepwise lifecycle lead-lifecycle`. */
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../src/core/paths.ts';
import { stepwise } from '../../support/project-copy.ts';

describe('stepwise lead', () => {
  it("keeps the lead example's own alias", { timeout: 120_000 }, async () => {
    const help = await stepwise(PACKAGE_ROOT, 'lead', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('stepwise lifecycle lead-lifecycle');
    const unknown = await stepwise(PACKAGE_ROOT, 'lifecycle', 'nope', 'replay', 'events.jsonl');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^stepwise: unknown command "nope" \(commands: lead-lifecycle\)\n$/);
  });
});
