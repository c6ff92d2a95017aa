import { describe, expect, it } from 'vitest';
import { getStep, loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { withToolOutputs } from '../../../src/runtime/steps/tool-outputs.ts';
import { NO_USAGE, type StepResult } from '../../../src/runtime/steps/types.ts';

const step = getStep(loadWorkflow('warranty-email'), '03a-valid-warranty');
const result = (fields: Record<string, unknown>, toolCalls: StepResult['toolCalls']): StepResult => ({
  next: '05-send-confirmation',
  reason: 'r',
  decidedBy: 'code',
  fields,
  toolCalls,
  usage: NO_USAGE,
});

describe('withToolOutputs', () => {
  it('03a declares its ticketId from create_ticket', () => {
    expect(step.outputs.ticketId!.from).toBe('create_ticket.ticketId');
  });

  it('takes the last successful call, skipping failed ones and other tools', () => {
    const { result: out, overrides } = withToolOutputs(
      step,
      result({ ticketId: 'TKT-FIRST', note: 'kept' }, [
        { tool: 'create_ticket', args: {}, result: { ticketId: 'TKT-FIRST' } },
        { tool: 'create_ticket', args: {}, result: { ticketId: 'TKT-SECOND' } },
        { tool: 'create_ticket', args: {}, error: 'ToolInputError: serialNumber: too short' },
        { tool: 'route', args: { ticketId: 'TKT-THIRD' }, error: 'rejected: r' },
      ]),
    );
    expect(out.fields).toEqual({ ticketId: 'TKT-SECOND', note: 'kept' });
    expect(overrides).toEqual([
      { field: 'ticketId', from: 'create_ticket.ticketId', reported: 'TKT-FIRST', kept: 'TKT-SECOND' },
    ]);
  });

  it('removes the field when the successful call has no such key, and leaves undeclared outputs alone', () => {
    const { result: out, overrides } = withToolOutputs(
      step,
      result({ ticketId: 'TKT-99999' }, [{ tool: 'create_ticket', args: {}, result: { status: 'open' } }]),
    );
    expect(out.fields).toEqual({});
    expect(overrides).toEqual([
      { field: 'ticketId', from: 'create_ticket.ticketId', reported: 'TKT-99999', kept: undefined },
    ]);
    const untouched = result({ serialNumber: 'SN1' }, []);
    expect(withToolOutputs(getStep(loadWorkflow('warranty-email'), '01-extract-serial'), untouched)).toEqual({
      result: untouched,
      overrides: [],
    });
  });
});
