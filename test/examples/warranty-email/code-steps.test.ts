/**
 * The warranty example's own code steps: 02-check-warranty routes on the registry's answer, 04-out-of-scope (also the
 * workflow's fallback) sends one of its fixed replies. The engine's code-step plumbing is tested in
 * test/runtime/steps/code-steps.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DefinitionError, StepFailedError } from '../../../src/core/errors.ts';
import { getStep } from '../../../src/definitions/workflow/loader.ts';
import type { StepDefinition } from '../../../src/definitions/workflow/schema.ts';
import type { StepInput } from '../../../src/runtime/contracts/step.ts';
import {
  stepInput as builtInput,
  type fakeToolbox,
  inboundEmail,
  previousState,
  runPluginStep,
} from '../../runtime/steps/fixtures.ts';
import { failure } from '../../support/failure.ts';
import { warrantyPlugin as plugin } from './support.ts';

const def = plugin.def;
/** A step input of this workflow, from a sender named Anna Berg. */
const stepInput = (step: string, overrides: Partial<StepInput> = {}) =>
  builtInput(step, {
    workflow: 'warranty-email',
    input: { email: inboundEmail({ from: 'anna.berg@example.com', fromName: 'Anna Berg' }) },
    ...overrides,
  });
const run = (step: StepDefinition, input: StepInput, results: Parameters<typeof fakeToolbox>[0] = {}) =>
  runPluginStep(plugin, step, input, { results });

describe('02-check-warranty (code step)', () => {
  const step = getStep(def, '02-check-warranty');
  const after01 = (data: Record<string, unknown>) =>
    stepInput(step.name, {
      previous: previousState({
        step: '01-extract-serial',
        next: step.name,
        reason: 'serial found',
        decidedBy: 'offline',
        data,
        count: 1,
      }),
    });

  it.each([
    ['valid', '03a-valid-warranty'],
    ['expired', '03c-expired-warranty'],
    ['not_found', '03b-device-not-found'],
  ])('routes status %s to %s with the registry answer as `warranty`', async (status, next) => {
    const answer = { serialNumber: 'SN12345', status, product: 'Aurora 14', warrantyEnd: '2027-01-01' };
    const { result, executed } = run(step, after01({ serialNumber: 'SN12345' }), { check_warranty: answer });
    expect(await result).toEqual({
      next,
      reason: `Warranty status: ${status}`,
      decidedBy: 'code',
      fields: { warranty: answer },
      toolCalls: [{ tool: 'check_warranty', args: { serialNumber: 'SN12345' }, result: answer }],
      usage: { modelCalls: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
    });
    expect(executed[0]!.ctx.step).toBe('02-check-warranty');
  });

  it('hands over to 04 when the lookup fails or answers nonsense', async () => {
    const failed = await run(step, after01({ serialNumber: 'SN12345' }), {
      check_warranty: { error: 'RegistryError: rejected' },
    }).result;
    expect(failed).toMatchObject({
      next: '04-out-of-scope',
      fields: { handoff: true },
      reason: 'Warranty lookup failed: RegistryError: rejected',
    });
    const odd = await run(step, after01({ serialNumber: 'SN12345' }), { check_warranty: { status: 'maybe' } }).result;
    expect(odd).toMatchObject({ next: '04-out-of-scope', reason: 'Warranty lookup failed: unexpected status "maybe"' });
  });

  it('hands over without calling the registry when step 01 left no serial number', async () => {
    const { result, executed } = run(step, after01({}));
    expect(await result).toMatchObject({ next: '04-out-of-scope', fields: { handoff: true }, toolCalls: [] });
    expect(executed).toEqual([]);
  });
});

describe('04-out-of-scope (code step and fallback)', () => {
  const step = getStep(def, '04-out-of-scope');
  const from01 = (next = step.name) =>
    previousState({
      step: '01-extract-serial',
      next,
      reason: 'Pricing question, not a warranty claim',
      decidedBy: 'model',
      count: 1,
    });

  it('sends the out-of-scope reply when step 01 routed here', async () => {
    const { result, executed } = run(step, stepInput(step.name, { previous: from01() }));
    const out = await result;
    expect(out.next).toBe('DONE');
    expect(out.reason).toBe('Out-of-scope reply sent (Pricing question, not a warranty claim)');
    expect(out.reply).toMatch(/^Hello Anna Berg,\n\nThank you for your email\. This address handles warranty claims/);
    expect(executed.map((e) => [e.name, e.args])).toEqual([['send_email', { body: out.reply }]]);
  });

  it('sends the hand-off reply after a caught error, with the error message in the reason', async () => {
    const cause = JSON.stringify({
      errorType: 'InvalidModelOutputError',
      errorMessage: '01-extract-serial: route "05-send-confirmation" is not a declared edge',
      trace: [],
    });
    const input = stepInput(step.name, {
      previous: previousState({ next: '01-extract-serial' }),
      error: { Error: 'InvalidModelOutputError', Cause: cause },
    });
    const out = await run(step, input).result;
    expect(out.reason).toBe(
      'Hand-off reply sent: 01-extract-serial failed with InvalidModelOutputError: 01-extract-serial: route "05-send-confirmation" is not a declared edge',
    );
    expect(out.reply).toContain('a member of our support team will review it');
  });

  it('sends the hand-off reply when it was reached by the Choice default (an undeclared route)', async () => {
    const out = await run(step, stepInput(step.name, { previous: from01('07-refund') })).result;
    expect(out.reason).toBe('Hand-off reply sent: route "07-refund" from 01-extract-serial is not a declared edge');
  });

  it('sends the hand-off reply when the previous step reported handoff', async () => {
    const previous = previousState({
      step: '02-check-warranty',
      next: step.name,
      reason: 'Warranty lookup failed: down',
      decidedBy: 'code',
      fields: { handoff: true },
      count: 2,
    });
    const out = await run(step, stepInput(step.name, { previous })).result;
    expect(out.reason).toBe('Hand-off reply sent: 02-check-warranty could not finish: Warranty lookup failed: down');
  });

  it('says so, and reports no reply, when send_email replayed a reply an earlier step sent', async () => {
    const cause = JSON.stringify({
      errorType: 'InvalidModelOutputError',
      errorMessage: '05-send-confirmation: no valid route after 6 model turns',
    });
    const input = stepInput(step.name, {
      previous: previousState({ step: '03a-valid-warranty', next: '05-send-confirmation', count: 3 }),
      error: { Error: 'InvalidModelOutputError', Cause: cause },
    });
    const out = await run(step, input, {
      send_email: { sent: true, to: 'anna.berg@example.com', messageId: '<first@outbox.local>', replayed: true },
    }).result;
    expect(out.reason).toBe(
      'Reply already sent for this email, not sent again (hand-off: 05-send-confirmation failed with InvalidModelOutputError: 05-send-confirmation: no valid route after 6 model turns)',
    );
    expect(out.reply).toBeUndefined();
  });

  it('greets without a name when the sender gave none', async () => {
    const out = await run(
      step,
      stepInput(step.name, { previous: from01(), input: { email: inboundEmail({ fromName: undefined }) } }),
    ).result;
    expect(out.reply).toMatch(/^Hello there,/);
  });

  it('fails (→ FallbackFailed) when even this reply cannot be sent', async () => {
    const error = await failure(
      run(step, stepInput(step.name, { previous: from01() }), { send_email: { error: 'MailError: SES rejected' } })
        .result,
    );
    expect(error).toBeInstanceOf(StepFailedError);
    expect(error.message).toBe('04-out-of-scope: the reply could not be sent: MailError: SES rejected');
  });

  it('needs both reply templates in its step file', async () => {
    const broken = { ...step, instruction: step.instruction.replace('## Reply: handoff', '## Handoff') };
    const error = await failure(run(broken, stepInput(step.name, { previous: from01() })).result);
    expect(error).toBeInstanceOf(DefinitionError);
    expect(error.message).toContain('missing "## Reply: handoff"');
  });
});
