import { describe, expect, it } from 'vitest';
import { getStep, loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { withToolOutputs } from '../../../src/runtime/steps/tool-outputs.ts';
import { NO_USAGE, type StepResult } from '../../../src/runtime/steps/types.ts';

const step = getStep(loadWorkflow('case-desk'), '03a-open-case');
const result = (fields: Record<string, unknown>, toolCalls: StepResult['toolCalls']): StepResult => ({
  next: '05-confirm',
  reason: 'r',
  decidedBy: 'code',
  fields,
  toolCalls,
  usage: NO_USAGE,
});

describe('withToolOutputs', () => {
  it('03a declares its caseId from open_case', () => {
    expect(step.outputs.caseId!.from).toBe('open_case.caseId');
  });

  it('takes the last successful call, skipping failed ones and other tools', () => {
    const { result: out, overrides } = withToolOutputs(
      step,
      result({ caseId: 'CASE-FIRST', note: 'kept' }, [
        { tool: 'open_case', args: {}, result: { caseId: 'CASE-FIRST' } },
        { tool: 'open_case', args: {}, result: { caseId: 'CASE-SECOND' } },
        { tool: 'open_case', args: {}, error: 'ToolInputError: caseRef: invalid' },
        { tool: 'route', args: { caseId: 'CASE-THIRD' }, error: 'rejected: r' },
      ]),
    );
    expect(out.fields).toEqual({ caseId: 'CASE-SECOND', note: 'kept' });
    expect(overrides).toEqual([
      { field: 'caseId', from: 'open_case.caseId', reported: 'CASE-FIRST', kept: 'CASE-SECOND' },
    ]);
  });

  it('removes the field when the successful call has no such key, and leaves undeclared outputs alone', () => {
    const { result: out, overrides } = withToolOutputs(
      step,
      result({ caseId: 'CASE-99999' }, [{ tool: 'open_case', args: {}, result: { status: 'filed' } }]),
    );
    expect(out.fields).toEqual({});
    expect(overrides).toEqual([{ field: 'caseId', from: 'open_case.caseId', reported: 'CASE-99999', kept: undefined }]);
    const untouched = result({ caseRef: 'C-10001' }, []);
    expect(withToolOutputs(getStep(loadWorkflow('case-desk'), '01-read-request'), untouched)).toEqual({
      result: untouched,
      overrides: [],
    });
  });
});
