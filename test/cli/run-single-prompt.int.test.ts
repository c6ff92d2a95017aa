/**
 * `stepwise run --mode single-prompt`: a sample mail goes through the real email ingress and is
 * answered by the workflow's single-prompt agent (one LLM step with every tool) over the session's
 * tools, instead of the state machine. A local chat-completions server scripts the model: a reply
 * promising money is refused by the steps' output guard (its CEL check), the rewritten one is sent.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as run from '../../src/cli/commands/run.ts';
import { ChatServer, toolCallReply } from '../runtime/models/chat-server.ts';
import { expectOneLine, runCli, useCliCapture } from '../support/cli.ts';
import { copyFixtureProject, FIXTURE_STATEMACHINES } from '../support/fixture-project.ts';
import { stepwise } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

const io = useCliCapture();
const SAMPLE = join(FIXTURE_STATEMACHINES, 'case-desk', 'samples', 'valid.eml');
const tempDir = useTempDirs('stepwise-single-prompt-');
const server = new ChatServer();
let baseUrl: string;

beforeAll(async () => {
  baseUrl = await server.start();
});
afterAll(() => server.stop());

const cli = (...args: string[]) => runCli([run], 'run', 'case-desk', '--email', SAMPLE, ...args);
const openai = () => ['--model', 'openai', '--openai-base-url', baseUrl, '--openai-model', 'scripted'];

describe('stepwise run --mode single-prompt', () => {
  it('answers a mail with the single-prompt agent, its one step in the trail, behind the output guard', {
    timeout: 120_000,
  }, async () => {
    server.reply(
      toolCallReply('lookup_case', { caseRef: 'C-10001' }),
      toolCallReply('open_case', { summary: 'The desk lamp switches off after a minute.', priority: 'normal' }),
      toolCallReply('send_email', { body: 'Hello Nora, as a gesture we will refund you $50 today.' }),
      toolCallReply('send_email', { body: 'Hello Nora, a person will look into your desk lamp.' }),
      toolCallReply('route', { next: 'DONE', reason: 'The follow-up is filed.' }),
    );
    expect(await cli('--mode', 'single-prompt', '--json', ...openai())).toBe(0);
    expect(io.err).toContain('mode: single-prompt');
    const [result] = JSON.parse(io.out);
    expect(result).toMatchObject({
      file: SAMPLE,
      messageId: '<fixture.valid.10001@mail.example.org>',
      status: 'SUCCEEDED',
      steps: [
        { name: 'monolithic', next: 'DONE', decidedBy: 'model', usage: expect.objectContaining({ modelCalls: 5 }) },
      ],
    });
    expect(result.toolCalls.map((c: { tool: string }) => c.tool)).toEqual([
      'lookup_case',
      'open_case',
      'send_email',
      'send_email',
    ]);
    // The steps' bound arguments: the case reference and product come from the lookup's answer, not the model.
    expect(result.toolCalls[1].args).toMatchObject({ caseRef: 'C-10001', product: 'Desk lamp' });
    // The guard's CEL check (no-money) refused the first reply; only the rewritten one went out.
    expect(result.toolCalls[2].error).toMatch(/^GuardViolationError: not sent, it contains no-money/);
    expect(result.outbox).toEqual([
      expect.objectContaining({
        to: 'nora.kent@example.org',
        body: 'Hello Nora, a person will look into your desk lamp.',
      }),
    ]);
    // The model was asked as one step with every tool.
    const tools = server.calls[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name).sort();
    expect(tools).toEqual(['lookup_case', 'open_case', 'route', 'send_email']);
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
    const copy = copyFixtureProject(tempDir());
    const unknown = await stepwise(copy, 'run', 'case-desk', '--email', SAMPLE, '--mode', 'graph');
    expect(unknown.code).toBe(2);
    expectOneLine(unknown.err);
    expect(unknown.err).toMatch(
      /'--mode <mode>' argument 'graph' is invalid\. Allowed choices are steps, single-prompt/,
    );
  });
});
