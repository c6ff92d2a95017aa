import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { allowListed, withBoundArgs } from '../../../src/runtime/steps/step-toolbox.ts';
import { refusedArgs } from '../../../src/runtime/tools/refusals.ts';
import { type CallContext, loggableArgs, type Toolbox } from '../../../src/runtime/tools/types.ts';

const ctx: CallContext = { workflow: 'wf', step: 's', execution: { id: 'arn', name: 'e1' }, input: {} };
const ticketSpec = {
  name: 'create_ticket',
  description: 'Open a ticket.',
  input: z.strictObject({ serialNumber: z.string(), product: z.string().optional(), issueSummary: z.string() }),
  personal: ['serialNumber'],
};

/** A toolbox that records what reached it. */
function recording() {
  const calls: unknown[] = [];
  const toolbox: Toolbox = {
    spec: (name) => (name === 'create_ticket' ? ticketSpec : undefined),
    execute: async (name, args) => (
      calls.push(args), { tool: name, args: args as Record<string, unknown>, result: { ok: true } }
    ),
  };
  return { toolbox, calls };
}

const step = {
  name: '03a',
  bind: { create_ticket: { serialNumber: 'data.device.serialNumber', product: 'data.device.product' } },
};
const scope = { data: { device: { serialNumber: 'SN48213', product: 'Lumen X2' } }, input: {} };

describe('bound tool arguments', () => {
  it('hides bound arguments from the schema the model sees', () => {
    const spec = withBoundArgs(recording().toolbox, step, scope).spec('create_ticket')!;
    expect(Object.keys(spec.input.shape)).toEqual(['issueSummary']);
  });

  it('fills them from state', async () => {
    const { toolbox, calls } = recording();
    const record = await withBoundArgs(toolbox, step, scope).execute('create_ticket', { issueSummary: 'Broken.' }, ctx);
    expect(record.error).toBeUndefined();
    expect(calls).toEqual([{ issueSummary: 'Broken.', serialNumber: 'SN48213', product: 'Lumen X2' }]);
  });

  it('refuses a call that sets one, even to the same value, and never runs it', async () => {
    const { toolbox, calls } = recording();
    const bound = withBoundArgs(toolbox, step, scope);
    const other = await bound.execute('create_ticket', { serialNumber: 'SN99999', issueSummary: 'x' }, ctx);
    const same = await bound.execute('create_ticket', { serialNumber: 'SN48213', issueSummary: 'x' }, ctx);
    expect(other.error).toMatch(
      /^ToolInputError: argument "serialNumber" is bound from data\.device\.serialNumber in step 03a: the caller may not set it$/,
    );
    expect(same.error).toMatch(/not even to the same value/);
    expect(other.args).toEqual({ serialNumber: 'SN99999', issueSummary: 'x' });
    expect(calls).toEqual([]);
  });

  it('refuses the call when the bound state has no value (no tool runs on a guess)', async () => {
    const { toolbox, calls } = recording();
    const record = await withBoundArgs(toolbox, step, { data: {}, input: {} }).execute(
      'create_ticket',
      { issueSummary: 'x' },
      ctx,
    );
    expect(record.error).toBe('ToolInputError: bound argument "serialNumber": data.device.serialNumber has no value');
    expect(calls).toEqual([]);
  });

  it('leaves unbound tools alone', async () => {
    const { toolbox, calls } = recording();
    await withBoundArgs(toolbox, { name: 's', bind: {} }, scope).execute(
      'create_ticket',
      { serialNumber: 'A', issueSummary: 'x' },
      ctx,
    );
    expect(calls).toEqual([{ serialNumber: 'A', issueSummary: 'x' }]);
  });
});

describe('refused calls', () => {
  it('are recorded with a bounded summary of their arguments, whatever the model sent', async () => {
    const huge = {
      body: 'x'.repeat(1_000_000),
      nested: { deep: { deeper: { deepest: 1 } } },
      ...Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])),
    };
    const record = await allowListed(recording().toolbox, { name: '01', tools: [] }).execute('send_email', huge, ctx);
    expect(record.error).toMatch(/^ToolNotAllowedError: tool "send_email" is not allowed in step 01/);
    expect(JSON.stringify(record.args).length).toBeLessThan(2_000);
    expect(record.args.body).toMatch(/…\(1000000 chars\)$/);
  });

  it('keep non-object arguments visible', () => {
    expect(refusedArgs('just text')).toEqual({ value: 'just text' });
  });
});

describe('loggable arguments', () => {
  it('are the arguments of the schema that the tool does not declare personal; unknown ones are dropped', () => {
    expect(
      loggableArgs(ticketSpec, { serialNumber: 'SN1', product: 'P', issueSummary: 'i', to: 'attacker@example.org' }),
    ).toEqual({ product: 'P', issueSummary: 'i' });
  });
});
