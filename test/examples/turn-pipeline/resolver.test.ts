/**
 * The variable resolver: a tool's arguments and the enforced expressions' session variables are
 * found in the message's entities, the session and the profile; what none of them holds goes to
 * generation, which asks the user, instead of the tool being skipped in silence.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  requiredArguments,
  resolveVariables,
  sessionVariablesRead,
} from '../../../lambdas/workflows/turn-pipeline/resolver.ts';
import { newSession } from '../../../lambdas/workflows/turn-pipeline/session.ts';
import { getStep } from '../../../src/definitions/workflow/loader.ts';
import type { StepInput } from '../../../src/runtime/contracts/step.ts';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import { allowListed } from '../../../src/runtime/steps/step-toolbox.ts';
import { createToolbox } from '../../../src/runtime/tools/toolbox.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';

describe('resolveVariables', () => {
  it('takes each variable from the first source that holds it, and returns the rest as still missing', () => {
    const entities = { order_id: 'A-10234', email: '' };
    const session = { order_id: 'A-99999', order_status: 'shipped' };
    const profile = { email: 'anna@example.com', tier: null };
    expect(
      resolveVariables(['order_id', 'order_status', 'email', 'tier', 'refund_approved'], [entities, session, profile]),
    ).toEqual({
      resolved: { order_id: 'A-10234', order_status: 'shipped', email: 'anna@example.com' },
      stillMissing: ['tier', 'refund_approved'],
    });
  });

  it("names a tool's required arguments and the session variables an expression reads", () => {
    expect(requiredArguments(z.strictObject({ order_id: z.string(), note: z.string().optional() }))).toEqual([
      'order_id',
    ]);
    expect(sessionVariablesRead(['response.max_amount', 'session.refund_approved', 'profile.tier'])).toEqual([
      'refund_approved',
    ]);
  });
});

describe('06-run-tools and 09-enforce with the resolver', async () => {
  const plugin = await loadPlugin('turn-pipeline');
  const ran: { name: string; args: unknown }[] = [];
  const real = createToolbox(Object.values(plugin.tools));
  // The order system is a double that records its calls; every other tool is the real one.
  const toolbox: Toolbox = {
    spec: real.spec,
    execute: async (name, args, ctx) => {
      if (name !== 'lookup_order') return real.execute(name, args, ctx);
      ran.push({ name, args });
      return {
        tool: name,
        args: args as Record<string, unknown>,
        result: { order_status: 'delivered', order_total: 75 },
      };
    },
  };
  const run = (name: string, data: Record<string, unknown>, message = 'Where is my order?') => {
    const step = getStep(plugin.def, name);
    const input: StepInput = {
      workflow: 'turn-pipeline',
      step: name,
      input: { sessionId: 's-1', message },
      previous: { step: '05-filter', next: name, reason: 'r', decidedBy: 'code', fields: {}, data, count: 6 },
      error: null,
      count: 7,
      execution: { id: 'arn:x', name: 'exec-1' },
    };
    const tool = { workflow: 'turn-pipeline', step: name, execution: input.execution, input: input.input };
    return plugin.codeSteps[step.handler!]!({
      def: plugin.def,
      step,
      input,
      toolbox: allowListed(toolbox, step),
      tool,
    });
  };
  const selection = { matched: ['order-status'], enforce: [], suppressed: [] };
  const base = { session: newSession('s-1'), selection, guidance: { rules: [] } };

  it('hands a required argument nobody gave to generation as missing, and runs nothing', async () => {
    ran.length = 0;
    const out = await run('06-run-tools', { ...base, entities: {} });
    expect(ran).toEqual([]);
    expect(out.fields.missing).toEqual(['order_id']);
    expect(out.reason).toContain('skipped lookup_order (missing order_id: generation asks)');
  });

  it('runs the tool with an argument found in the profile when the message has none', async () => {
    ran.length = 0;
    const session = { ...newSession('s-1'), profile: { order_id: 'A-10234' } };
    const out = await run('06-run-tools', { ...base, session, entities: {} });
    expect(ran).toEqual([{ name: 'lookup_order', args: { order_id: 'A-10234' } }]);
    expect(out.fields).toMatchObject({ missing: [], variables: { order_status: 'delivered' } });
    // A malformed id is asked for again rather than sent to the order system.
    ran.length = 0;
    const bad = await run('06-run-tools', { ...base, entities: { order_id: 'order 7' } });
    expect([ran, bad.fields.missing]).toEqual([[], ['order_id']]);
  });

  it('resolves a session variable an enforced expression reads from the profile before enforcing', async () => {
    const enforced = { matched: [], enforce: ['refund-limit'], suppressed: [] };
    const refund = (profile: Record<string, unknown>) =>
      run(
        '09-enforce',
        {
          ...base,
          selection: enforced,
          session: { ...newSession('s-1'), profile },
          entities: {},
          response: 'I have approved your $80 refund.',
        },
        'Please refund my $80 order.',
      );
    const verdict = async (profile: Record<string, unknown>) =>
      (
        (await refund(profile)).fields.enforcement as { attempts: { verdicts: { check: string; passed: boolean }[] }[] }
      ).attempts[0]!.verdicts.find((v) => v.check === 'refund-limit')!;
    expect((await verdict({})).passed).toBe(false);
    expect((await verdict({ refund_approved: true })).passed).toBe(true);
  });
});
