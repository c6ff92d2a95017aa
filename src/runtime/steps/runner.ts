import type * as z from 'zod';
import { DefinitionError, InvalidModelOutputError } from '../../core/errors.ts';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type {
  ContentBlock,
  ConverseRequest,
  ConverseResponse,
  Message,
  ModelProvider,
} from '../contracts/model-port.ts';
import {
  contextMessage,
  ROUTE_TOOL,
  routeSchema,
  routeToolSpec,
  systemPrompt,
  toolSpecs,
  type UntrustedFields,
} from '../contracts/prompt.ts';
import type { StepInput, TokenUsage, ToolCallRecord } from '../contracts/step.ts';
import { parseStepText } from '../contracts/text-protocol.ts';
import { boundedTranscript, type ModelCallRecord } from '../contracts/transcript.ts';
import type { ModelDeadline } from '../models/deadline.ts';
import type { CallContext, Toolbox, ToolSpec } from '../tools/types.ts';
import { NO_USAGE, type StepResult, sentReply, toolContext } from './types.ts';

export interface RunLlmStepArgs {
  def: WorkflowDefinition;
  step: StepDefinition;
  input: StepInput;
  /**
   * The execution input's untrusted fields (`untrustedFields`), as the trigger expands them; undefined when the step
   * does not read them.
   */
  untrusted: Record<string, unknown> | undefined;
  /** Which input and state fields outsiders wrote (`untrustedFields`, `untrustedData`). */
  untrustedFields: UntrustedFields;
  model: ModelProvider;
  /** The step's toolbox: restricted to its allow-list, its bound arguments applied. */
  toolbox: Toolbox;
  /** Model calls allowed for one step. @default 6 */
  maxTurns?: number;
  /** Time left in the Lambda; bounds the lock a side-effecting tool call holds. */
  remainingTimeMs?: () => number;
  /** The invocation's model budget (from the step's timeout); without it each call has the provider's own timeout. */
  deadline?: ModelDeadline;
  /** A consensus sample's temperature. @default the step's `temperature` */
  temperature?: number;
}

const DEFAULT_MAX_TURNS = 6;

/**
 * One model call: within the step invocation's deadline when it has one (see `ModelDeadline`: a
 * call that would outlast the step's budget fails as `ModelTimeoutError`, which the ASL retries,
 * instead of the Lambda timing out with `Sandbox.Timedout`, which is not retried).
 */
function converseWithin(
  model: ModelProvider,
  request: ConverseRequest,
  deadline: ModelDeadline | undefined,
  step: string,
): Promise<ConverseResponse> {
  return deadline ? deadline.converse(model, request, step) : model.converse(request);
}

type RouteDecision = { next: string; reason: string } & Record<string, unknown>;

function addUsage(total: TokenUsage, usage: ConverseResponse['usage']): TokenUsage {
  return {
    modelCalls: total.modelCalls + 1,
    inputTokens: total.inputTokens + usage.inputTokens,
    outputTokens: total.outputTokens + usage.outputTokens,
    cacheReadInputTokens: total.cacheReadInputTokens + (usage.cacheReadInputTokens ?? 0),
    cacheWriteInputTokens: total.cacheWriteInputTokens + (usage.cacheWriteInputTokens ?? 0),
  };
}

/** Why a candidate route fails the step's route schema, in words the model (and the console) can act on. */
function routeProblem(
  step: StepDefinition,
  schema: z.ZodType<RouteDecision>,
  candidate: unknown,
): { decision?: RouteDecision; problem?: string } {
  const parsed = schema.safeParse(candidate);
  if (parsed.success) return { decision: parsed.data };
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join('.');
  const next = (candidate as { next?: unknown } | null)?.next;
  const problem =
    field === 'next'
      ? `route ${JSON.stringify(next)} is not a declared edge of ${step.name} (declared: ${step.next.join(', ')})`
      : `route input ${field || '(root)'}: ${issue.message}`;
  return { problem };
}

const errorResult = (toolUseId: string, text: string): ContentBlock => ({
  toolResult: { toolUseId, content: [{ text }], status: 'error' },
});
const okResult = (toolUseId: string, result: unknown): ContentBlock => ({
  toolResult: { toolUseId, content: [{ text: JSON.stringify(result ?? null) }], status: 'success' },
});

function resolveSpecs(step: StepDefinition, toolbox: Toolbox): ToolSpec[] {
  return step.tools.map((name, i) => {
    const spec = toolbox.spec(name);
    if (!spec) throw new DefinitionError(step.file, `tools.${i}`, `the toolbox has no tool "${name}"`);
    return spec;
  });
}

/**
 * Whether a single-edge step is finished after a turn without a route: every tool it `requires`
 * (without `requires`: every call of the turn, at least one) succeeded, and no declared output
 * waits for the model (each comes `from` a tool). Then asking the model only to call `route`
 * would be a wasted model call.
 */
function finishedWithoutRoute(step: StepDefinition, turn: ToolCallRecord[], all: ToolCallRecord[]): boolean {
  if (step.next.length !== 1 || Object.values(step.outputs).some((o) => o.from === undefined)) return false;
  const succeeded = (calls: ToolCallRecord[], tool?: string) =>
    calls.some((c) => c.error === undefined && (tool === undefined || c.tool === tool));
  if (step.requires.length) return step.requires.every((tool) => succeeded(all, tool));
  return turn.length > 0 && turn.every((c) => c.error === undefined);
}

/**
 * Run one LLM step: the step instruction as system prompt (cached), the step context as the
 * first user message, the step's allowed tools plus `route`, and the tool-use loop until the
 * model routes.
 *
 * Routing decisions are validated with zod against the step's declared edges. An invalid route
 * (undeclared edge, bad outputs, `route` mixed with other tool calls, or no route at all) is
 * answered once with an error that names the declared edges; a second one throws
 * `InvalidModelOutputError`, so the runner never returns an undeclared route: the ASL Catch takes
 * the execution to the workflow fallback with the reason in `$.error`. Rejected routes are kept in
 * `toolCalls` (tool `route`, with the error) so the console shows them.
 *
 * A text answer with `NEXT_STEP:` lines is accepted as a fallback parse (decidedBy `model-text`).
 * Tools outside the allow-list are refused, recorded with an error, and never executed. A step
 * with a single edge routes without a `route` call once its tools did their job
 * (see `finishedWithoutRoute`).
 */
export async function runLlmStep(args: RunLlmStepArgs): Promise<StepResult> {
  const { step, maxTurns = DEFAULT_MAX_TURNS } = args;
  const talk = startConversation(args);
  let rejections = 0;
  for (let turn = 1; turn <= maxTurns; turn++) {
    const response = await askModel(args, talk);
    const { decision, via, rejected, reply, turnCalls } = await answerTurn(args, talk, response);
    if (decision) return finish(args, talk, decision, via);
    if (rejected === undefined && finishedWithoutRoute(step, turnCalls, talk.toolCalls)) {
      const tools = [...new Set(turnCalls.map((c) => c.tool))].join(', ');
      const reason = `Done: ${tools} succeeded (single edge, no route call needed)`;
      return finish(args, talk, { next: step.next[0]!, reason }, 'tool');
    }
    if (rejected !== undefined && ++rejections > 1) {
      const repeated = `${rejected} (repeated after the model was told the declared edges)`;
      throw new InvalidModelOutputError(`${step.name}: ${repeated}`);
    }
    talk.messages.push({ role: 'user', content: reply });
  }
  throw new InvalidModelOutputError(`${step.name}: no valid route after ${maxTurns} model turns`);
}

/** An LLM step's exchange with the model so far, and what it needs to go on. */
interface Conversation {
  /** The step's route schema: its declared edges and outputs. */
  schema: z.ZodType<RouteDecision>;
  messages: Message[];
  /** The next request: the cached system prompt and tools, and the messages so far. */
  request: () => ConverseRequest;
  /** The context every tool call of the step gets. */
  tool: CallContext;
  calls: ModelCallRecord[];
  toolCalls: ToolCallRecord[];
  usage: TokenUsage;
}

/** The conversation before the first model call: the step context as its first message. */
function startConversation(args: RunLlmStepArgs): Conversation {
  const { def, step, input, toolbox } = args;
  const schema = routeSchema(step) as unknown as z.ZodType<RouteDecision>;
  const system = systemPrompt(step);
  const tools = [...toolSpecs(resolveSpecs(step, toolbox)), routeToolSpec(step)].map((toolSpec) => ({ toolSpec }));
  const messages: Message[] = [contextMessage(input, args.untrustedFields, args.untrusted)];
  const request = (): ConverseRequest => ({
    system,
    messages: [...messages],
    toolConfig: { tools },
    inferenceConfig: { maxTokens: def.manifest.model.maxTokens, temperature: args.temperature ?? step.temperature },
  });
  const tool = toolContext(input, args.remainingTimeMs);
  return { schema, messages, request, tool, calls: [], toolCalls: [], usage: NO_USAGE };
}

/** One model call, recorded with its usage; the message it returns joins the conversation. */
async function askModel({ model, step, deadline }: RunLlmStepArgs, talk: Conversation): Promise<ConverseResponse> {
  const sentAt = Date.now();
  const response = await converseWithin(model, talk.request(), deadline, step.name);
  const { stopReason, usage } = response;
  talk.calls.push({ messages: talk.messages.length, stopReason, usage, durationMs: Date.now() - sentAt });
  talk.usage = addUsage(talk.usage, usage);
  const message = response.output.message;
  if (message.content.length === 0)
    throw new InvalidModelOutputError(`${step.name}: the model returned no content (stop reason ${stopReason})`);
  talk.messages.push(message);
  return response;
}

/** What a model turn came to. */
interface TurnOutcome {
  /** The valid route the turn chose, if any. */
  decision?: RouteDecision;
  /** Whether the route came as a `route` call or as `NEXT_STEP:` text. */
  via: 'tool' | 'text';
  /** The problem of the turn's first rejected route. */
  rejected?: string;
  /** The tool results and rejections the model reads next. */
  reply: ContentBlock[];
  /** The calls of the step's tools this turn ran. */
  turnCalls: ToolCallRecord[];
}

/**
 * Answer the model's turn: check the route it chose (as text or as a `route` call) and run the
 * other tools it called, recording every call and every rejected route.
 */
async function answerTurn(
  { step, toolbox }: RunLlmStepArgs,
  talk: Conversation,
  response: ConverseResponse,
): Promise<TurnOutcome> {
  const uses = response.output.message.content.flatMap((block) => ('toolUse' in block ? [block.toolUse] : []));
  const turn: TurnOutcome = { via: uses.length === 0 ? 'text' : 'tool', reply: [], turnCalls: [] };
  // Every rejected route is recorded; a turn with one counts once, and only one such turn is forgiven.
  const reject = (problem: string, routeArgs: Record<string, unknown>): string => {
    talk.toolCalls.push({ tool: ROUTE_TOOL, args: routeArgs, error: `rejected: ${problem}` });
    turn.rejected ??= problem;
    return `Rejected: ${problem}. Call ${ROUTE_TOOL} again with next set to one of: ${step.next.join(', ')}.`;
  };

  if (turn.via === 'text') {
    const { decision, problem, candidate } = textRoute(step, talk.schema, response);
    if (decision) turn.decision = decision;
    else turn.reply.push({ text: reject(problem!, candidate ?? {}) });
  }
  for (const use of uses) {
    const useArgs = (use.input ?? {}) as Record<string, unknown>;
    if (use.name === ROUTE_TOOL) {
      // A route chosen in the same turn as other calls was chosen without their results (e.g. a guessed ticket id).
      const checked =
        uses.length > 1
          ? { problem: `${ROUTE_TOOL} must be called alone, after the other tool results are read` }
          : routeProblem(step, talk.schema, use.input);
      if (checked.decision) turn.decision = checked.decision;
      else turn.reply.push(errorResult(use.toolUseId, reject(checked.problem!, useArgs)));
      continue;
    }
    const record = await toolbox.execute(use.name, use.input, talk.tool);
    talk.toolCalls.push(record);
    turn.turnCalls.push(record);
    turn.reply.push(
      record.error !== undefined
        ? errorResult(use.toolUseId, `Error: ${record.error}`)
        : okResult(use.toolUseId, record.result),
    );
  }
  return turn;
}

/** The route a text answer names in its `NEXT_STEP:` lines, checked like a `route` call. */
function textRoute(
  step: StepDefinition,
  schema: z.ZodType<RouteDecision>,
  response: ConverseResponse,
): { decision?: RouteDecision; problem?: string; candidate?: Record<string, unknown> } {
  const text = response.output.message.content.map((block) => ('text' in block ? block.text : '')).join('\n');
  const parsed = parseStepText(text, step);
  if (parsed.next === undefined) {
    const cutOff = response.stopReason === 'max_tokens';
    const problem = cutOff ? 'the answer was cut off before a route was chosen' : 'the answer ended without a route';
    return { problem };
  }
  const candidate = { ...parsed.fields, next: parsed.next, reason: parsed.reason ?? 'no reason given' };
  return { ...routeProblem(step, schema, candidate), candidate };
}

/** The step's result once a route is chosen, with the bounded transcript of the conversation. */
function finish(
  { model, step, toolbox }: RunLlmStepArgs,
  talk: Conversation,
  decision: RouteDecision,
  via: 'tool' | 'text',
): StepResult {
  const { next, reason, ...fields } = decision;
  const decidedBy = model.name === 'offline' ? 'offline' : via === 'tool' ? 'model' : 'model-text';
  const { system, toolConfig, inferenceConfig } = talk.request();
  const transcript = boundedTranscript({
    provider: model.name,
    // The model actually called (an OpenAI-compatible endpoint's, a panel's); the offline stand-in has none.
    ...(model.modelId !== undefined && { modelId: model.modelId }),
    stepVersion: step.version,
    system,
    toolConfig,
    inferenceConfig,
    messages: [...talk.messages],
    calls: talk.calls,
  });
  const { toolCalls, usage } = talk;
  const reply = sentReply(toolCalls, (name) => toolbox.spec(name));
  return { next, reason, decidedBy, fields, reply, toolCalls, usage, transcript };
}
