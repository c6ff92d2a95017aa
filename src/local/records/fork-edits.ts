/**
 * What a fork may change, and how each change takes effect: the step input at the fork point, tool
 * results pinned, the model's answer at an LLM step pinned (its tool calls and route, through the
 * same tool-use loop and route check as a model's), and an email workflow's email itself (a new
 * mail through the ingress). An edit that could not take effect is refused with the reason, never
 * accepted and ignored; what a fork changed is listed for its record and the compare view.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { InboundEmail } from '../../definitions/workflow/inbound-email.ts';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { ContentBlock, ConverseResponse, ModelProvider } from '../../runtime/contracts/model-port.ts';
import { ROUTE_TOOL, readStepContext } from '../../runtime/contracts/prompt.ts';
import type { ForkPoint, ForkProblem, ToolPins } from './fork.ts';
import type { ForkChange } from './history.ts';

/** The model's answer at the forked step, pinned: the tools it asks for (in order), then its route. */
export const PinnedAnswerSchema = z.strictObject({
  next: z.string().min(1),
  reason: z.string().min(1).default('pinned in a fork'),
  fields: z.record(z.string(), z.unknown()).default({}),
  toolCalls: z
    .array(z.strictObject({ tool: z.string().min(1), args: z.record(z.string(), z.unknown()).default({}) }))
    .default([]),
});
export type PinnedAnswer = z.output<typeof PinnedAnswerSchema>;

/** The email of an email workflow, edited at its first step: it goes through the ingress again as a new mail. */
export const EmailEditSchema = z.strictObject({
  subject: z.string().max(998).optional(),
  body: z.string().optional(),
  from: z.email().optional(),
  fromName: z.string().max(200).optional(),
});
export type EmailEdit = z.output<typeof EmailEditSchema>;

/** Every change a fork can make. */
export interface ForkEdits {
  stepInput?: Record<string, unknown>;
  toolResults?: ToolPins;
  answer?: PinnedAnswer;
  email?: EmailEdit;
}

const TYPES = { string: 'string', number: 'number', boolean: 'boolean', object: 'object' } as const;

/** Why the pinned answer cannot take effect at `step`, if it cannot. */
function answerProblems(step: StepDefinition, answer: PinnedAnswer): ForkProblem[] {
  if (step.kind !== 'llm')
    return [
      { path: 'answer', message: `${step.name} is a code step: no model answers there (edit its input instead)` },
    ];
  if (step.consensus)
    return [
      { path: 'answer', message: `${step.name} samples the model several times and votes: pin its tools instead` },
    ];
  const problems: ForkProblem[] = [];
  if (!step.next.includes(answer.next))
    problems.push({ path: 'answer.next', message: `${step.name} routes only to ${step.next.join(', ')}` });
  for (const [field, value] of Object.entries(answer.fields)) {
    const declared = step.outputs[field];
    if (!declared)
      problems.push({
        path: `answer.fields.${field}`,
        message: `not an output of ${step.name} (its outputs: ${Object.keys(step.outputs).join(', ') || 'none'})`,
      });
    else if (declared.from)
      problems.push({
        path: `answer.fields.${field}`,
        message: `taken from ${declared.from}, never from the model: pin the tool's result instead`,
      });
    else if (typeof value !== TYPES[declared.type] || value === null)
      problems.push({ path: `answer.fields.${field}`, message: `must be a ${declared.type}` });
  }
  answer.toolCalls.forEach((call, i) => {
    if (!step.tools.includes(call.tool))
      problems.push({
        path: `answer.toolCalls.${i}.tool`,
        message: `${step.name} may call only ${step.tools.join(', ') || 'no tool'}`,
      });
  });
  return problems;
}

/** Why pinned tool results cannot take effect: an unknown step, or a tool the step may not call (`route` is no tool). */
function toolPinProblems(def: WorkflowDefinition, pins: ToolPins): ForkProblem[] {
  return Object.entries(pins).flatMap(([stepName, tools]) => {
    const step = def.steps.find((s) => s.name === stepName);
    if (!step) return [{ path: `toolResults.${stepName}`, message: `${def.manifest.name} has no step ${stepName}` }];
    return Object.keys(tools).flatMap((tool) =>
      step.tools.includes(tool)
        ? []
        : [
            {
              path: `toolResults.${stepName}.${tool}`,
              message:
                tool === ROUTE_TOOL
                  ? 'the route is the model’s answer, not a tool: pin the answer instead'
                  : `${stepName} may call only ${step.tools.join(', ') || 'no tool'}`,
            },
          ],
    );
  });
}

/**
 * Every edit of `edits` that could not take effect at `point`, with the reason.
 * @param email the parent's email, for an email workflow (its steps read the stored email, not `input.email`).
 */
export function forkEditProblems(
  def: WorkflowDefinition,
  point: ForkPoint,
  edits: ForkEdits,
  email: InboundEmail | undefined,
): ForkProblem[] {
  const step = def.steps.find((s) => s.name === point.step)!;
  const problems: ForkProblem[] = [];
  if (edits.answer) problems.push(...answerProblems(step, edits.answer));
  if (edits.toolResults) problems.push(...toolPinProblems(def, edits.toolResults));
  if (edits.email) {
    if (!email)
      problems.push({
        path: 'email',
        message: `${def.manifest.name} does not start from email: there is no email to edit`,
      });
    else if (point.index !== 0)
      problems.push({
        path: 'email',
        message: 'the email can be edited only at the first step: it runs through the ingress again',
      });
    if (edits.stepInput)
      problems.push({
        path: 'stepInput',
        message: 'a fork with an edited email starts from the ingress: edit the email only',
      });
  }
  const editedEmail = (edits.stepInput?.input as { email?: unknown } | undefined)?.email;
  if (email && editedEmail !== undefined && JSON.stringify(editedEmail) !== JSON.stringify(email))
    problems.push({
      path: 'stepInput.input.email',
      message:
        'the steps read the stored email, not this record: edit the email (subject, body, from) at the first step instead',
    });
  return problems;
}

/** The paths where two JSON values differ, at most `depth` keys deep, with both sides. */
function differences(path: string, a: unknown, b: unknown, depth: number): ForkChange[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const objects = a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b);
  if (!objects || depth === 0) return [{ what: path, ...(a !== undefined && { from: a }), to: b }];
  const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
  return [...keys].flatMap((k) =>
    differences(`${path}.${k}`, (a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], depth - 1),
  );
}

/** What the fork changed, against what the parent recorded there. */
export function forkChanges(
  edits: ForkEdits,
  recorded: {
    stepInput?: Record<string, unknown>;
    answer?: { next?: string; fields?: Record<string, unknown> };
    email?: InboundEmail & { body?: string };
  },
): ForkChange[] {
  const changes: ForkChange[] = [];
  if (edits.stepInput) changes.push(...differences('stepInput', recorded.stepInput ?? {}, edits.stepInput, 3));
  for (const [step, tools] of Object.entries(edits.toolResults ?? {}))
    for (const [tool, result] of Object.entries(tools))
      changes.push({ what: `toolResults.${step}.${tool}`, to: result });
  if (edits.answer) {
    const { next, fields, toolCalls } = edits.answer;
    changes.push({ what: 'answer.next', ...(recorded.answer?.next && { from: recorded.answer.next }), to: next });
    for (const [field, value] of Object.entries(fields))
      changes.push({
        what: `answer.fields.${field}`,
        ...(recorded.answer?.fields?.[field] !== undefined && { from: recorded.answer.fields[field] }),
        to: value,
      });
    if (toolCalls.length) changes.push({ what: 'answer.toolCalls', to: toolCalls });
  }
  for (const [key, value] of Object.entries(edits.email ?? {}))
    if (value !== undefined) {
      const before = recorded.email?.[key as keyof EmailEdit];
      changes.push({ what: `email.${key}`, ...(before !== undefined && { from: before }), to: value });
    }
  return changes;
}

/**
 * `inner` with the model's answer at `step` pinned, once: the step's first conversation gets the
 * pinned tool calls one per turn, then the `route` call; every later call goes to `inner`.
 */
export function pinnedModel(inner: ModelProvider, step: string, answer: PinnedAnswer): ModelProvider {
  let answered = false;
  return {
    name: inner.name,
    ...(inner.modelId && { modelId: inner.modelId }),
    async converse(request, options) {
      if (answered || readStepContext(request)?.step !== step) return inner.converse(request, options);
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      const call = answer.toolCalls[turn];
      if (!call) answered = true;
      const content: ContentBlock[] = [
        { text: `[pinned in a fork] step ${step}: ${call ? `call ${call.tool}` : `route to ${answer.next}`}` },
        call
          ? { toolUse: { toolUseId: `pinned-${turn + 1}`, name: call.tool, input: call.args } }
          : {
              toolUse: {
                toolUseId: `pinned-${turn + 1}`,
                name: ROUTE_TOOL,
                input: { ...answer.fields, next: answer.next, reason: answer.reason },
              },
            },
      ];
      const response: ConverseResponse = {
        output: { message: { role: 'assistant', content } },
        stopReason: 'tool_use',
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      };
      return response;
    },
  };
}

/** An RFC 2047 word: any header text, whatever its characters. */
const encodedWord = (text: string) => `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;

/**
 * The raw mail of an edited email, to `inbox`, as the ingress receives one: a new Message-ID (it is
 * a new mail, not a duplicate), and the SES verdicts the original passed with (it was accepted), now
 * for the edited sender's domain. Loop, size and sender checks apply to it as to any mail.
 */
export function editedEmailRaw(
  original: InboundEmail & { body: string },
  edit: EmailEdit,
  inbox: string,
  now: Date,
): string {
  const from = edit.from ?? original.from;
  const fromName = edit.fromName ?? original.fromName;
  const domain = from.slice(from.lastIndexOf('@') + 1);
  const body = Buffer.from(edit.body ?? original.body, 'utf8').toString('base64');
  return [
    `Return-Path: <${from}>`,
    'X-SES-Spam-Verdict: PASS',
    'X-SES-Virus-Verdict: PASS',
    `Authentication-Results: amazonses.com; spf=pass smtp.mailfrom=${domain}; dkim=pass header.i=@${domain}; dmarc=pass header.from=${domain};`,
    `From: ${fromName ? `${encodedWord(fromName)} ` : ''}<${from}>`,
    `To: ${inbox}`,
    `Subject: ${encodedWord(edit.subject ?? original.subject)}`,
    `Date: ${now.toUTCString()}`,
    `Message-ID: <fork-${randomUUID()}@stepwise.local>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset="UTF-8"',
    'Content-Transfer-Encoding: base64',
    '',
    ...(body.match(/.{1,76}/g) ?? ['']),
    '',
  ].join('\r\n');
}
