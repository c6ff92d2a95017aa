/**
 * `stepwise run --mode single-prompt`: a sample mail goes through the real email ingress and is
 * answered by the workflow's single-prompt agent (one LLM step with every tool) over the session's
 * tools, instead of the state machine. A local chat-completions server scripts the model: a reply
 * promising money is refused by the steps' output guard (its CEL check), the rewritten one is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as run from '../../src/cli/commands/run.ts';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import { ChatServer, toolCallReply } from '../runtime/models/chat-server.ts';
import { expectOneLine, runCli, useCliCapture } from '../support/cli.ts';
import { stepwise } from '../support/project-copy.ts';

const io = useCliCapture();
const SAMPLE = 'statemachines/warranty-email/samples/valid-warranty.eml';
const server = new ChatServer();
let baseUrl: string;

beforeAll(async () => {
  baseUrl = await server.start();
});
afterAll(() => server.stop());

const cli = (...args: string[]) => runCli([run], 'run', 'warranty-email', '--email', SAMPLE, ...args);
const openai = () => ['--model', 'openai', '--openai-base-url', baseUrl, '--openai-model', 'scripted'];

describe('stepwise run --mode single-prompt', () => {
  it('answers a mail with the single-prompt agent, its one step in the trail, behind the output guard', {
    timeout: 120_000,
  }, async () => {
    server.reply(
      toolCallReply('check_warranty', { serialNumber: 'SN48213' }),
      toolCallReply('create_ticket', { issueSummary: 'The headphones do not charge.', priority: 'normal' }),
      toolCallReply('send_email', { body: 'Hello Maria, as a gesture we will refund you $50 today.' }),
      toolCallReply('send_email', { body: 'Hello Maria, a repair is on its way for your headphones.' }),
      toolCallReply('route', { next: 'DONE', reason: 'The claim is confirmed.' }),
    );
    expect(await cli('--mode', 'single-prompt', '--json', ...openai())).toBe(0);
    expect(io.err).toContain('mode: single-prompt');
    const [result] = JSON.parse(io.out);
    expect(result).toMatchObject({
      file: SAMPLE,
      messageId: '<CAF7x2q1.valid-warranty.48213@mail.example.org>',
      status: 'SUCCEEDED',
      steps: [
        { name: 'monolithic', next: 'DONE', decidedBy: 'model', usage: expect.objectContaining({ modelCalls: 5 }) },
      ],
    });
    expect(result.toolCalls.map((c: { tool: string }) => c.tool)).toEqual([
      'check_warranty',
      'create_ticket',
      'send_email',
      'send_email',
    ]);
    // The steps' bound arguments: the serial and product come from the registry's answer, not the model.
    expect(result.toolCalls[1].args).toMatchObject({
      serialNumber: 'SN48213',
      product: 'Lumen X2 wireless headphones',
    });
    // The guard's CEL check (no-money-promises) refused the first reply; only the rewritten one went out.
    expect(result.toolCalls[2].error).toMatch(/^GuardViolationError: not sent, it contains no-money-promises/);
    expect(result.outbox).toEqual([
      expect.objectContaining({
        to: 'maria.lopez@example.org',
        body: 'Hello Maria, a repair is on its way for your headphones.',
      }),
    ]);
    // The model was asked as one step with every tool.
    const tools = server.calls[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name).sort();
    expect(tools).toEqual(['check_warranty', 'create_ticket', 'route', 'send_email']);
  });

  it("shows the one step in the text output, under the mode's old name `monolithic` too", {
    timeout: 120_000,
  }, async () => {
    server.reply(toolCallReply('route', { next: 'DONE', reason: 'Nothing to do.' }));
    expect(await cli('--mode', 'monolithic', ...openai())).toBe(0);
    expect(io.err).toContain('mode: single-prompt');
    expect(io.out).toContain('monolithic');
    expect(io.out).toContain('SUCCEEDED');
  });

  it('refuses the offline stand-in before anything starts, and an unknown mode as a usage error, each in one line', {
    timeout: 60_000,
  }, async () => {
    expect(await cli('--mode', 'single-prompt')).toBe(1);
    expect(io.err.split('\n').at(-2)).toMatch(
      /^stepwise: --mode single-prompt needs a model \(--model bedrock or openai\)/,
    );
    const unknown = await stepwise(PROJECT_ROOT, 'run', 'warranty-email', '--email', SAMPLE, '--mode', 'graph');
    expect(unknown.code).toBe(2);
    expectOneLine(unknown.err);
    expect(unknown.err).toMatch(
      /'--mode <mode>' argument 'graph' is invalid\. Allowed choices are steps, single-prompt/,
    );
  });
});
