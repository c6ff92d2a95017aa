/**
 * The step handler's model: the one its caller gives (or wraps), else the provider MODEL_PROVIDER
 * names, created once per container; a panel step asks each of its models through it; every
 * throttled call is counted.
 */
import { describe, expect, it } from 'vitest';
import { ModelThrottledError } from '../../../src/core/errors.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import type { ConverseRequest, ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import { StepEnv } from '../../../src/runtime/step-handler/step-input.ts';
import { stepModel } from '../../../src/runtime/step-handler/step-model.ts';
import { failure } from '../../support/failure.ts';
import { captureLogger, scriptedModel, text } from './fixtures.ts';

const def = loadWorkflow('case-desk');
const EMPTY: ConverseRequest = { system: [], messages: [] };

function observability() {
  const { logger, lines } = captureLogger();
  const metrics: { name: string; value: number; dimensions?: Record<string, string> }[] = [];
  let dimensions: Record<string, string> = {};
  const obs = {
    logger,
    tracer: { captureAWSv3Client: <T>(client: T) => client },
    metrics: {
      addDimensions: (d: Record<string, string>) => void (dimensions = { ...dimensions, ...d }),
      addMetric: (name: string, _unit: unknown, value: number) => void metrics.push({ name, value, dimensions }),
    },
    publish: () => {},
  };
  return { obs: obs as unknown as Parameters<typeof stepModel>[2], lines, metrics };
}
const env =
  (over: Record<string, string> = {}) =>
  () =>
    StepEnv.parse({ WORKFLOW: 'case-desk', ...over });

describe('stepModel', () => {
  it('uses the given model, once, and asks a panel model through its forModel', async () => {
    const { model } = scriptedModel([[text('a')]]);
    const panelCalls: string[] = [];
    const given: ModelProvider = { ...model, forModel: (id) => (panelCalls.push(id), { ...model, modelId: id }) };
    const { obs } = observability();
    const models = stepModel(env(), { model: given }, obs);
    expect(models(def)).toBe(models(def));
    expect(models(def, 'panel-b').modelId).toBe('panel-b');
    expect(models(def, 'panel-b')).toBe(models(def, 'panel-b'));
    expect(panelCalls).toEqual(['panel-b']);
    expect((await models(def).converse(EMPTY)).output.message.content).toEqual([text('a')]);
  });

  it('creates the offline stand-in from the environment, with a WARN, and wraps it when asked', () => {
    const { obs, lines } = observability();
    const wrapped: string[] = [];
    const models = stepModel(env({ MODEL_PROVIDER: 'offline' }), { wrapModel: (m) => (wrapped.push(m.name), m) }, obs);
    expect(models(def).name).toBe('offline');
    expect(wrapped).toEqual(['offline']);
    expect(lines.find((l) => l.level === 'WARN')!.message).toMatch(/^MODEL_PROVIDER=offline/);
  });

  it('builds Bedrock and OpenAI-compatible providers, refusing an OpenAI endpoint without a model', async () => {
    const { obs } = observability();
    expect(stepModel(env({ MODEL_PROVIDER: 'bedrock', AWS_REGION: 'us-east-1' }), {}, obs)(def)).toMatchObject({
      name: 'bedrock',
      modelId: def.manifest.model.id,
    });
    const openai = stepModel(
      env({ MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_MODEL: 'llama' }),
      {},
      obs,
    )(def);
    expect(openai).toMatchObject({ name: 'openai', modelId: 'llama' });
    const keyed = stepModel(
      env({
        MODEL_PROVIDER: 'openai',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
        OPENAI_MODEL: 'llama',
        OPENAI_API_KEY_PARAMETER: '/stepwise/key',
      }),
      {},
      obs,
    )(def);
    expect(keyed.forModel!('mistral').modelId).toBe('mistral');
    const missing = stepModel(env({ MODEL_PROVIDER: 'openai' }), {}, obs);
    expect((await failure((async () => missing(def))())).message).toContain('needs OPENAI_BASE_URL and OPENAI_MODEL');
  });

  it('counts each throttled call as ModelThrottled of the workflow, and rethrows it', async () => {
    const { obs, metrics } = observability();
    const throttled: ModelProvider = {
      name: 'bedrock',
      converse: async () => {
        throw new ModelThrottledError('slow down');
      },
      forModel: () => throttled,
    };
    const models = stepModel(env(), { model: throttled }, obs);
    await expect(models(def).converse(EMPTY)).rejects.toBeInstanceOf(ModelThrottledError);
    await expect(models(def, 'panel').converse(EMPTY)).rejects.toBeInstanceOf(ModelThrottledError);
    expect(metrics).toEqual([
      { name: 'ModelThrottled', value: 1, dimensions: { workflow: 'case-desk' } },
      { name: 'ModelThrottled', value: 1, dimensions: { workflow: 'case-desk' } },
    ]);
  });
});
