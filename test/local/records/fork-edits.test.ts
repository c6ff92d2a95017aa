/**
 * What a fork may change: the model's answer pinned at an LLM step (through the tool-use loop, once),
 * the email edited at an email workflow's first step (a new mail the ingress parses), what changed
 * listed against the parent; and every edit that could not take effect refused with its reason.
 */
import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { forkPoints } from '../../../src/local/records/fork.ts';
import {
  editedEmailRaw,
  forkChanges,
  forkEditProblems,
  PinnedAnswerSchema,
  pinnedModel,
} from '../../../src/local/records/fork-edits.ts';
import type { ConverseRequest, ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import { contextMessage } from '../../../src/runtime/contracts/prompt.ts';
import { parseInbound } from '../../../src/runtime/triggers/email/checks.ts';
import { recordedExecution } from '../../support/fixtures.ts';

const def = loadWorkflow('case-desk');
const parent = recordedExecution('case-desk-valid');
const points = forkPoints(parent, def);
const email = (parent.input as { email: Parameters<typeof forkEditProblems>[3] }).email;
const answer = (value: unknown) => PinnedAnswerSchema.parse(value);
const messages = (step: string) => [
  contextMessage(
    { step, input: {}, previous: { data: {} }, error: null } as unknown as Parameters<typeof contextMessage>[0],
    { input: [], data: [] },
    undefined,
  ),
];

describe('refusals', () => {
  const problems = (at: number, edits: Parameters<typeof forkEditProblems>[2]) =>
    forkEditProblems(def, points[at]!, edits, email).map((p) => `${p.path}: ${p.message}`);

  it('accepts an answer the step could give, and an email edit at the first step', () => {
    expect(
      problems(0, {
        answer: answer({ next: '02-look-up', fields: { caseRef: 'C-10002' } }),
        email: { subject: 'Broken kettle' },
      }),
    ).toEqual([]);
  });

  it('refuses a route the step cannot take, an undeclared or tool-bound output, and a tool it may not call', () => {
    expect(
      problems(0, {
        answer: answer({ next: '05-confirm', fields: { nope: 1 }, toolCalls: [{ tool: 'open_case' }] }),
      }),
    ).toEqual([
      expect.stringMatching(/^answer.next: 01-read-request routes only to /),
      expect.stringMatching(/^answer.fields.nope: not an output of 01-read-request/),
      expect.stringMatching(/^answer.toolCalls.0.tool: 01-read-request may call only/),
    ]);
    const opened = points.find((p) => p.step === '03a-open-case')!.index;
    expect(problems(opened, { answer: answer({ next: '05-confirm', fields: { caseId: 'CASE-1' } }) })).toEqual([
      expect.stringMatching(/^answer.fields.caseId: taken from open_case.caseId, never from the model/),
    ]);
  });

  it('refuses an answer at a code step, the route pinned as a tool, and the email edited past the first step', () => {
    const code = points.find((p) => def.steps.find((s) => s.name === p.step)?.kind === 'code')!;
    expect(problems(code.index, { answer: answer({ next: 'DONE' }) })[0]).toMatch(/is a code step/);
    expect(problems(0, { toolResults: { '01-read-request': { route: { next: 'x' } } } })).toEqual([
      expect.stringMatching(/route is the model’s answer, not a tool/),
    ]);
    expect(problems(1, { email: { subject: 'x' } })).toEqual([expect.stringMatching(/only at the first step/)]);
  });

  it('refuses the execution input’s email edited in the step input: the steps read the stored one', () => {
    const stepInput = { input: { email: { ...email, subject: 'Edited' } } };
    expect(problems(0, { stepInput })).toEqual([
      expect.stringMatching(/^stepInput.input.email: the steps read the stored email/),
    ]);
  });
});

describe('the pinned answer', () => {
  it('asks for the pinned tool calls one per turn, then routes, once; later calls go to the model', async () => {
    const asked: string[] = [];
    const inner: ModelProvider = {
      name: 'offline',
      async converse(request: ConverseRequest) {
        asked.push(JSON.stringify(request.messages.length));
        return {
          output: { message: { role: 'assistant', content: [] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        };
      },
    };
    const pinned = pinnedModel(
      inner,
      '01-read-request',
      answer({
        next: '02-look-up',
        fields: { caseRef: 'C-1' },
        toolCalls: [{ tool: 'lookup_case', args: { a: 1 } }],
      }),
    );
    const first = await pinned.converse({ system: [], messages: messages('01-read-request') });
    expect(first.output.message.content[1]).toEqual({
      toolUse: { toolUseId: 'pinned-1', name: 'lookup_case', input: { a: 1 } },
    });
    const second = await pinned.converse({
      system: [],
      messages: [...messages('01-read-request'), first.output.message, { role: 'user', content: [{ text: 'result' }] }],
    });
    expect(second.output.message.content[1]).toEqual({
      toolUse: {
        toolUseId: 'pinned-2',
        name: 'route',
        input: { caseRef: 'C-1', next: '02-look-up', reason: 'pinned in a fork' },
      },
    });
    await pinned.converse({ system: [], messages: messages('01-read-request') });
    await pinned.converse({ system: [], messages: messages('02-look-up') });
    expect(asked).toHaveLength(2);
  });

  it('lists what the fork changed against what the parent answered', () => {
    const changes = forkChanges(
      { answer: answer({ next: '02-look-up', fields: { caseRef: 'C-2' } }), email: { subject: 'New' } },
      { answer: { next: '04-hand-off', fields: {} }, email: { ...email!, body: 'b' } },
    );
    expect(changes).toEqual([
      { what: 'answer.next', from: '04-hand-off', to: '02-look-up' },
      { what: 'answer.fields.caseRef', to: 'C-2' },
      { what: 'email.subject', from: email!.subject, to: 'New' },
    ]);
  });
});

it('an edited email is a new mail the ingress parses, with the edits and a new Message-ID', async () => {
  const raw = editedEmailRaw(
    { ...email!, body: 'Old body' },
    { subject: 'Kaputt – C-10001', body: 'Neuer Text ✓' },
    'cases@example.com',
    new Date(0),
  );
  const parsed = await parseInbound(raw, { maxBytes: 1e6, maxBodyChars: 1e5 } as never);
  expect(parsed).toMatchObject({ subject: 'Kaputt – C-10001' });
  expect(JSON.stringify(parsed)).toContain('Neuer Text ✓');
  expect(JSON.stringify(parsed)).not.toContain(email!.messageId);
});
