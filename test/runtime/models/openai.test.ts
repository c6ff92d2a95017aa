/**
 * The OpenAI-compatible provider against a local server speaking the documented chat-completions
 * wire format: the request it sends (system prompt, tools, tool results, streaming off), what it
 * makes of the answer (tool calls, stop reasons, usage) and of errors (429 with retry-after, 5xx,
 * 4xx error bodies, timeouts), as the Bedrock adapter does.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidModelOutputError,
  ModelRequestError,
  ModelThrottledError,
  ModelTimeoutError,
} from '../../../src/core/errors.ts';
import type { ConverseRequest } from '../../../src/runtime/contracts/model-port.ts';
import { OpenAiModel, retryAfterSeconds } from '../../../src/runtime/models/openai.ts';
import { ChatServer, toolCallReply } from './chat-server.ts';

const server = new ChatServer();
let baseUrl: string;
beforeAll(async () => {
  baseUrl = await server.start();
});
afterAll(() => server.stop());
afterEach(() => {
  server.calls.length = 0;
});

const model = (extra: Partial<ConstructorParameters<typeof OpenAiModel>[0]> = {}) =>
  new OpenAiModel({ baseUrl, model: 'llama3.1:8b', maxTokens: 256, ...extra });

const request: ConverseRequest = {
  system: [{ text: 'You route.' }, { cachePoint: { type: 'default' } }],
  messages: [
    { role: 'user', content: [{ text: 'Where is my order?' }] },
    {
      role: 'assistant',
      content: [
        { text: 'Looking it up.' },
        { toolUse: { toolUseId: 'call_7', name: 'lookup_order', input: { order_id: 'A-1' } } },
      ],
    },
    {
      role: 'user',
      content: [
        { toolResult: { toolUseId: 'call_7', content: [{ text: '{"status":"shipped"}' }], status: 'success' } },
        { text: 'Rejected: call route.' },
      ],
    },
  ],
  toolConfig: {
    tools: [
      {
        toolSpec: {
          name: 'route',
          description: 'Route.',
          inputSchema: { json: { type: 'object', properties: { next: { type: 'string' } } } },
        },
      },
    ],
    toolChoice: { any: {} },
  },
  inferenceConfig: { maxTokens: 100 },
};

describe('OpenAiModel against a local chat-completions server', () => {
  it('sends the chat-completions request: system prompt, tools, tool calls and results in order, streaming off, temperature 0', async () => {
    server.reply(toolCallReply('route', { next: 'DONE' }));
    await model({ apiKey: 'sk-test' }).converse(request);
    const [call] = server.calls;
    expect(call!.path).toBe('/v1/chat/completions');
    expect(call!.headers.authorization).toBe('Bearer sk-test');
    expect(call!.body).toEqual({
      model: 'llama3.1:8b',
      stream: false,
      max_tokens: 100,
      temperature: 0,
      messages: [
        { role: 'system', content: 'You route.' },
        { role: 'user', content: 'Where is my order?' },
        {
          role: 'assistant',
          content: 'Looking it up.',
          tool_calls: [
            { id: 'call_7', type: 'function', function: { name: 'lookup_order', arguments: '{"order_id":"A-1"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_7', content: '{"status":"shipped"}' },
        { role: 'user', content: 'Rejected: call route.' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'route',
            description: 'Route.',
            parameters: { type: 'object', properties: { next: { type: 'string' } } },
          },
        },
      ],
      tool_choice: 'required',
    });
  });

  it('sends no Authorization header without a key, and its own max_tokens when the request sets none', async () => {
    server.reply(toolCallReply('route', {}));
    await model().converse({ ...request, inferenceConfig: { temperature: 0.4 } });
    expect(server.calls[0]!.headers.authorization).toBeUndefined();
    expect(server.calls[0]!.body).toMatchObject({ max_tokens: 256, temperature: 0.4 });
  });

  it('returns a tool call as a toolUse block with parsed input, stop reason tool_use and usage', async () => {
    server.reply(
      toolCallReply(
        'route',
        { next: '02-check', reason: 'serial found' },
        { prompt_tokens: 500, completion_tokens: 40, total_tokens: 540 },
      ),
    );
    const answer = await model().converse(request);
    expect(answer).toEqual({
      output: {
        message: {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 'call_1', name: 'route', input: { next: '02-check', reason: 'serial found' } } },
          ],
        },
      },
      stopReason: 'tool_use',
      usage: { inputTokens: 500, outputTokens: 40, totalTokens: 540 },
    });
  });

  it('returns text with end_turn, max_tokens for length, and cached prompt tokens as cache reads', async () => {
    server.reply(
      {
        status: 200,
        body: {
          choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'NEXT_STEP: DONE' } }],
          usage: {
            prompt_tokens: 10,
            completion_tokens: 3,
            total_tokens: 13,
            prompt_tokens_details: { cached_tokens: 8 },
          },
        },
      },
      {
        status: 200,
        body: {
          choices: [{ finish_reason: 'length', message: { role: 'assistant', content: 'NEXT_ST' } }],
          usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
        },
      },
    );
    expect(await model().converse(request)).toMatchObject({
      output: { message: { content: [{ text: 'NEXT_STEP: DONE' }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 10, cacheReadInputTokens: 8 },
    });
    expect((await model().converse(request)).stopReason).toBe('max_tokens');
  });

  it('maps 429 with retry-after to ModelThrottledError carrying the wait', async () => {
    server.reply({
      status: 429,
      headers: { 'retry-after': '7' },
      body: { error: { message: 'Rate limit reached', type: 'rate_limit_exceeded' } },
    });
    const error = await model()
      .converse(request)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelThrottledError);
    expect(error).toMatchObject({
      name: 'ModelThrottledError',
      retryAfterSeconds: 7,
      message: expect.stringContaining('HTTP 429: rate_limit_exceeded: Rate limit reached (retry after 7s)'),
    });
  });

  it('maps 5xx and 408 to the transient ModelTimeoutError, and other error bodies to the permanent ModelRequestError', async () => {
    server.reply(
      { status: 503, body: { error: { message: 'model is loading', type: 'server_error' } } },
      { status: 408, body: 'timeout' },
      {
        status: 404,
        body: {
          error: { message: 'model "llama9" not found', type: 'invalid_request_error', code: 'model_not_found' },
        },
      },
      { status: 401, body: { error: 'unauthorized' } },
    );
    await expect(model().converse(request)).rejects.toMatchObject({
      name: 'ModelTimeoutError',
      message: expect.stringContaining('model is loading'),
    });
    await expect(model().converse(request)).rejects.toBeInstanceOf(ModelTimeoutError);
    await expect(model().converse(request)).rejects.toMatchObject({
      name: 'ModelRequestError',
      message: expect.stringContaining('invalid_request_error: model "llama9" not found'),
    });
    await expect(model().converse(request)).rejects.toBeInstanceOf(ModelRequestError);
  });

  it('maps an endpoint that is down or too slow to ModelTimeoutError', async () => {
    await expect(
      new OpenAiModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', maxTokens: 10 }).converse(request),
    ).rejects.toBeInstanceOf(ModelTimeoutError);
    const never: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)));
    await expect(model({ fetch: never, timeoutMs: 20 }).converse(request)).rejects.toBeInstanceOf(ModelTimeoutError);
  });

  it('rejects a malformed answer or tool arguments that are not JSON with InvalidModelOutputError', async () => {
    server.reply(
      { status: 200, body: { choices: [] } },
      {
        status: 200,
        body: {
          choices: [
            {
              finish_reason: 'tool_calls',
              message: { tool_calls: [{ id: 'c', function: { name: 'route', arguments: '{not json' } }] },
            },
          ],
        },
      },
    );
    await expect(model().converse(request)).rejects.toBeInstanceOf(InvalidModelOutputError);
    await expect(model().converse(request)).rejects.toThrow(/not JSON/);
  });

  it('reads retry-after as seconds or an HTTP date', () => {
    expect(retryAfterSeconds('12')).toBe(12);
    expect(retryAfterSeconds('Wed, 25 Nov 2026 18:00:30 GMT', new Date('2026-11-25T18:00:00Z'))).toBe(30);
    expect(retryAfterSeconds(null)).toBeUndefined();
  });
});
