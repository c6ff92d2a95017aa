import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidModelOutputError,
  ModelRequestError,
  ModelThrottledError,
  ModelTimeoutError,
} from '../../../src/core/errors.ts';
import type { ConverseRequest } from '../../../src/runtime/contracts/model-port.ts';
import { BedrockModel } from '../../../src/runtime/models/bedrock.ts';
import { failure } from '../../support/failure.ts';
import { ConverseServer, converseBody, serviceError } from './converse-server.ts';

const MODEL_ID = 'anthropic.claude-3-5-haiku-20241022-v1:0';

const request: ConverseRequest = {
  system: [{ text: 'You are step 01.' }, { cachePoint: { type: 'default' } }],
  messages: [{ role: 'user', content: [{ text: 'Step context' }] }],
  toolConfig: {
    tools: [
      {
        toolSpec: {
          name: 'route',
          description: 'Choose the next step.',
          inputSchema: {
            json: { type: 'object', properties: { next: { type: 'string', enum: ['DONE'] } }, required: ['next'] },
          },
        },
      },
    ],
  },
  inferenceConfig: { maxTokens: 512 },
};

let server: ConverseServer;
let endpoint: string;
let model: BedrockModel;

beforeAll(async () => {
  server = new ConverseServer();
  endpoint = await server.start();
  model = new BedrockModel({
    modelId: MODEL_ID,
    maxTokens: 1024,
    region: 'us-east-1',
    endpoint,
    timeoutMs: 400,
    credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' },
  });
});
afterAll(async () => {
  model.destroy();
  await server.stop();
});
afterEach(() => {
  server.calls.length = 0;
});

describe('BedrockModel against a local Converse endpoint', () => {
  it('sends the Converse wire request with temperature 0, the pinned model and the cache point', async () => {
    server.reply({ status: 200, body: converseBody([{ text: 'ok' }], 'end_turn') });
    await model.converse(request);
    const [call] = server.calls;
    expect(call!.path).toBe(`/model/${encodeURIComponent(MODEL_ID)}/converse`);
    expect(call!.headers[':method']).toBe('POST');
    expect(String(call!.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDLOCAL\//);
    expect(call!.body.inferenceConfig).toEqual({ maxTokens: 512, temperature: 0 });
    expect(call!.body.system).toEqual([{ text: 'You are step 01.' }, { cachePoint: { type: 'default' } }]);
    expect(call!.body.toolConfig.tools[0].toolSpec.name).toBe('route');
    expect(call!.body.toolConfig.tools[0].toolSpec.inputSchema.json.properties.next.enum).toEqual(['DONE']);
  });

  it('uses its own maxTokens when the request sets none, and the step temperature (0 when the request sets none)', async () => {
    server.reply({ status: 200, body: converseBody([{ text: 'ok' }], 'end_turn') });
    await model.converse({ ...request, inferenceConfig: { temperature: 0.9 } });
    expect(server.calls[0]!.body.inferenceConfig).toEqual({ maxTokens: 1024, temperature: 0.9 });
    server.reply({ status: 200, body: converseBody([{ text: 'ok' }], 'end_turn') });
    await model.converse({ ...request, inferenceConfig: {} });
    expect(server.calls[1]!.body.inferenceConfig).toEqual({ maxTokens: 1024, temperature: 0 });
  });

  it('returns a tool-use turn with its input and the stop reason', async () => {
    server.reply({
      status: 200,
      body: converseBody(
        [
          { text: 'Routing.' },
          { toolUse: { toolUseId: 'tu-1', name: 'route', input: { next: 'DONE', reason: 'done' } } },
        ],
        'tool_use',
      ),
    });
    const response = await model.converse(request);
    expect(response.stopReason).toBe('tool_use');
    expect(response.output.message.content).toEqual([
      { text: 'Routing.' },
      { toolUse: { toolUseId: 'tu-1', name: 'route', input: { next: 'DONE', reason: 'done' } } },
    ]);
  });

  it('returns end_turn text with usage including cache read and write tokens', async () => {
    server.reply({
      status: 200,
      body: converseBody([{ text: 'NEXT_STEP: DONE' }], 'end_turn', {
        inputTokens: 2100,
        outputTokens: 9,
        totalTokens: 2109,
        cacheReadInputTokens: 2048,
        cacheWriteInputTokens: 0,
      }),
    });
    const response = await model.converse(request);
    expect(response.stopReason).toBe('end_turn');
    expect(response.usage).toEqual({
      inputTokens: 2100,
      outputTokens: 9,
      totalTokens: 2109,
      cacheReadInputTokens: 2048,
      cacheWriteInputTokens: 0,
    });
  });

  it('passes the max_tokens stop reason through', async () => {
    server.reply({ status: 200, body: converseBody([{ text: 'NEXT_ST' }], 'max_tokens') });
    expect((await model.converse(request)).stopReason).toBe('max_tokens');
  });

  it('maps ThrottlingException (x-amzn-errortype header) to ModelThrottledError', async () => {
    server.reply(serviceError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'));
    const error = await failure(model.converse(request));
    expect(error).toBeInstanceOf(ModelThrottledError);
    expect(error.name).toBe('ModelThrottledError');
    expect(error.message).toContain('ThrottlingException (HTTP 429)');
    expect(server.calls).toHaveLength(1); // maxAttempts 1: the ASL retries, not the SDK
  });

  it('maps ThrottlingException given only as __type in the body', async () => {
    server.reply({ status: 400, body: { __type: 'com.amazon.bedrock#ThrottlingException', message: 'slow down' } });
    expect(await failure(model.converse(request))).toBeInstanceOf(ModelThrottledError);
  });

  it('maps a 500 InternalServerException and a bare 502 to ModelTimeoutError', async () => {
    server.reply(serviceError(500, 'InternalServerException', 'boom'), { status: 502, body: {} });
    expect(await failure(model.converse(request))).toBeInstanceOf(ModelTimeoutError);
    expect(await failure(model.converse(request))).toBeInstanceOf(ModelTimeoutError);
  });

  it('maps ModelNotReadyException and ServiceUnavailableException to ModelTimeoutError', async () => {
    server.reply(
      serviceError(429, 'ModelNotReadyException', 'warming up'),
      serviceError(503, 'ServiceUnavailableException', 'unavailable'),
    );
    expect(await failure(model.converse(request))).toBeInstanceOf(ModelTimeoutError);
    expect(await failure(model.converse(request))).toBeInstanceOf(ModelTimeoutError);
  });

  it('maps a hung request to ModelTimeoutError after the configured timeout', async () => {
    server.reply('hang');
    const error = await failure(model.converse(request));
    expect(error).toBeInstanceOf(ModelTimeoutError);
    expect(error.message).toContain('TimeoutError');
  });

  it('maps ValidationException to the permanent ModelRequestError', async () => {
    server.reply(
      serviceError(400, 'ValidationException', 'The model returned the following errors: messages: field required'),
    );
    const error = await failure(model.converse(request));
    expect(error).toBeInstanceOf(ModelRequestError);
    expect(error.message).toContain('ValidationException');
  });

  it('rejects a malformed response at the edge with InvalidModelOutputError', async () => {
    server.reply({ status: 200, body: converseBody([{ text: 'hi' }], 'thinking_hard') });
    const error = await failure(model.converse(request));
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect(error.message).toContain('stopReason');
  });
});
