/** The warranty workflow's personal data stays out of the event log's tool arguments. */
import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { WARRANTY_TOOLS } from './support.ts';

const tools: Record<string, (typeof WARRANTY_TOOLS)[keyof typeof WARRANTY_TOOLS]> = WARRANTY_TOOLS;
/** The argument names of a tool the event log keeps. */
const loggableNames = (tool: string) =>
  Object.keys(tools[tool]!.input.shape).filter((arg) => !(tools[tool]!.personal ?? []).includes(arg));

describe('the warranty workflow and its tools', () => {
  it('never log a pii output of a step as a tool argument', () => {
    for (const s of loadWorkflow('warranty-email').steps) {
      const pii = Object.entries(s.outputs)
        .filter(([, o]) => o.pii)
        .map(([name]) => name);
      for (const tool of s.tools) for (const arg of loggableNames(tool)) expect(pii).not.toContain(arg);
    }
    // Step outputs flow into later steps' tool arguments under the same names.
    const allPii = loadWorkflow('warranty-email').steps.flatMap((s) =>
      Object.entries(s.outputs)
        .filter(([, o]) => o.pii)
        .map(([n]) => n),
    );
    for (const tool of ['check_warranty', 'create_ticket', 'send_email'])
      for (const arg of loggableNames(tool)) expect(allPii).not.toContain(arg);
  });
});
