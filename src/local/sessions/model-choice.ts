/**
 * The model every step of a local session calls (`--model`): what the choice needs before anything
 * starts, and the environment it gives the functions.
 */
import { InvalidInputError, MissingCredentialsError } from '../../core/errors.ts';

export type ModelChoice = 'offline' | 'bedrock' | 'openai';

/** `--model openai`: the OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server, LM Studio, a hosted API). */
export interface OpenAiEndpoint {
  readonly baseUrl: string;
  readonly model: string;
  /** @default the OPENAI_API_KEY environment variable, when set */
  readonly apiKey?: string;
}

/**
 * Fail early, with one line, when the choice cannot work: `bedrock` without credentials or region
 * (instead of every step failing into the fallback), `openai` without an endpoint.
 * @throws MissingCredentialsError for `bedrock`; InvalidInputError for `openai`.
 */
export async function assertModelAccess(model: ModelChoice, openai: OpenAiEndpoint | undefined): Promise<void> {
  if (model === 'bedrock') await assertBedrockAccess();
  if (model === 'openai' && !openai)
    throw new InvalidInputError(
      '--model openai needs the endpoint: --openai-base-url URL --openai-model NAME (or OPENAI_BASE_URL and OPENAI_MODEL)',
    );
}

/**
 * The functions' environment for the choice besides `MODEL_PROVIDER`: Bedrock's region, or the lexical
 * embeddings of the other choices and the OpenAI endpoint.
 */
export function modelEnvironment(model: ModelChoice, openai: OpenAiEndpoint | undefined): Record<string, string> {
  if (model === 'bedrock') return { AWS_REGION: (process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION)! };
  const apiKey = openai?.apiKey ?? process.env.OPENAI_API_KEY;
  return {
    EMBEDDINGS_PROVIDER: 'lexical',
    ...(model === 'openai' && {
      OPENAI_BASE_URL: openai!.baseUrl,
      OPENAI_MODEL: openai!.model,
      ...(apiKey && { OPENAI_API_KEY: apiKey }),
    }),
  };
}

async function assertBedrockAccess(): Promise<void> {
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region)
    throw new MissingCredentialsError('--model bedrock needs an AWS region: set AWS_REGION (e.g. us-east-1)');
  const { BedrockRuntimeClient } = await import('@aws-sdk/client-bedrock-runtime');
  const client = new BedrockRuntimeClient({ region });
  try {
    await client.config.credentials();
  } catch (e) {
    const why = (e as Error).message.split('\n')[0];
    throw new MissingCredentialsError(
      `--model bedrock needs AWS credentials (set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY): ${why}`,
    );
  } finally {
    client.destroy();
  }
}
