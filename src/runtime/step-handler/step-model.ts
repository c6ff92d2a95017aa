/**
 * The model a step handler asks: the one its caller passed, or the provider `MODEL_PROVIDER`
 * selects (Bedrock, an OpenAI-compatible endpoint or the offline stand-in), created on first use.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { InvalidInputError, ModelThrottledError, ToolUnavailableError } from '../../core/errors.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { ModelProvider } from '../contracts/model-port.ts';
import { BedrockModel } from '../models/bedrock.ts';
import { OfflineModel } from '../models/offline.ts';
import { OpenAiModel } from '../models/openai.ts';
import type { ClientTracer, Observability } from '../observability.ts';
import type { StepEnv } from './step-input.ts';

/** A model the caller passes instead of the environment's, or a wrapper of the environment's. */
export interface GivenModel {
  model?: ModelProvider;
  wrapModel?: (model: ModelProvider, def: WorkflowDefinition) => ModelProvider;
}

type ProviderObservability = Pick<Observability, 'logger' | 'tracer'>;
type ThrottleMetrics = Pick<Observability, 'metrics' | 'publish'>;

/** The step's model: the manifest's, or (a panel step's `models`) the one of that id. */
export type StepModel = (def: WorkflowDefinition, modelId?: string) => ModelProvider;

/**
 * The step model of one handler. The provider is created on the first call and kept for the
 * container; a panel step (`models`) asks each of its models through that same provider. Every
 * throttled call is counted (see {@link countingThrottles}).
 */
export function stepModel(
  config: () => StepEnv,
  given: GivenModel,
  obs: ProviderObservability & ThrottleMetrics,
): StepModel {
  let model: ModelProvider | undefined;
  const panel = new Map<string, ModelProvider>();
  const baseModel = (def: WorkflowDefinition): ModelProvider => {
    if (model) return model;
    const counted = (provider: ModelProvider) => countingThrottles(provider, def.manifest.name, obs);
    if (given.model) return (model = counted(given.model));
    const created = providerFor(config(), def, obs);
    return (model = counted(given.wrapModel ? given.wrapModel(created, def) : created));
  };
  return (def, modelId) => {
    const base = baseModel(def);
    if (modelId === undefined) return base;
    let one = panel.get(modelId);
    if (!one) panel.set(modelId, (one = base.forModel?.(modelId) ?? base));
    return one;
  };
}

/** The provider `MODEL_PROVIDER` names, configured for the workflow. */
function providerFor(cfg: StepEnv, def: WorkflowDefinition, obs: ProviderObservability): ModelProvider {
  const { MODEL_PROVIDER, MODEL_ID, AWS_REGION, AWS_ENDPOINT_URL_BEDROCK_RUNTIME } = cfg;
  if (MODEL_PROVIDER === 'offline') {
    obs.logger.warn('MODEL_PROVIDER=offline: LLM steps are decided by the deterministic offline stand-in, NOT an LLM');
    return OfflineModel.forWorkflow(def);
  }
  if (MODEL_PROVIDER === 'openai') return openAiModel(cfg, def, obs.tracer);
  return new BedrockModel({
    modelId: MODEL_ID ?? def.manifest.model.id,
    maxTokens: def.manifest.model.maxTokens,
    region: AWS_REGION,
    endpoint: AWS_ENDPOINT_URL_BEDROCK_RUNTIME,
    tracer: obs.tracer,
  });
}

/**
 * Every throttled model call counts once in `ModelThrottled` (dimension `workflow`), on its own EMF
 * line: the step fails with it (the ASL retries), so no step metric would carry it.
 */
function countingThrottles(provider: ModelProvider, workflow: string, obs: ThrottleMetrics): ModelProvider {
  return {
    // Getters: a provider may answer these differently over time (a scripted test model does).
    get name() {
      return provider.name;
    },
    get modelId() {
      return provider.modelId;
    },
    ...(provider.forModel && {
      forModel: (modelId: string) => countingThrottles(provider.forModel!(modelId), workflow, obs),
    }),
    async converse(request, options) {
      try {
        return await provider.converse(request, options);
      } catch (e) {
        if (e instanceof ModelThrottledError) {
          obs.metrics.addDimensions({ workflow });
          obs.metrics.addMetric('ModelThrottled', MetricUnit.Count, 1);
          obs.publish();
        }
        throw e;
      }
    },
  };
}

/**
 * The OpenAI-compatible provider from the environment. The key, when the endpoint needs one, comes
 * from `OPENAI_API_KEY` (local runs) or is read once per container from the SSM SecureString
 * parameter `OPENAI_API_KEY_PARAMETER` (deployed: the key never sits in the function's configuration).
 */
function openAiModel(cfg: StepEnv, def: WorkflowDefinition, tracer: ClientTracer): ModelProvider {
  if (!cfg.OPENAI_BASE_URL || !cfg.OPENAI_MODEL)
    throw new InvalidInputError('step environment: MODEL_PROVIDER=openai needs OPENAI_BASE_URL and OPENAI_MODEL');
  const options = { baseUrl: cfg.OPENAI_BASE_URL, model: cfg.OPENAI_MODEL, maxTokens: def.manifest.model.maxTokens };
  if (!cfg.OPENAI_API_KEY_PARAMETER) return new OpenAiModel({ ...options, apiKey: cfg.OPENAI_API_KEY });
  const name = cfg.OPENAI_API_KEY_PARAMETER;
  let ready: Promise<ModelProvider> | undefined;
  // The SSM client is loaded only by functions that need it: it stays out of every other cold start.
  const keyed = () =>
    (ready ??= import('@aws-sdk/client-ssm')
      .then(({ SSMClient, GetParameterCommand }) =>
        tracer
          .captureAWSv3Client(new SSMClient({ region: cfg.AWS_REGION }))
          .send(new GetParameterCommand({ Name: name, WithDecryption: true })),
      )
      .then((out) => new OpenAiModel({ ...options, apiKey: out.Parameter?.Value }) as ModelProvider)
      .catch((e: Error) => {
        ready = undefined;
        const problem = `the OpenAI API key parameter ${name} could not be read: ${e.name}: ${e.message}`;
        throw new ToolUnavailableError(problem, { cause: e });
      }));
  const provider: ModelProvider = {
    name: 'openai',
    modelId: options.model,
    converse: async (request, opts) => (await keyed()).converse(request, opts),
    forModel: (id) => openAiModel({ ...cfg, OPENAI_MODEL: id }, def, tracer),
  };
  return provider;
}
