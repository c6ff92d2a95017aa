/**
 * The embeddings port: Titan Text Embeddings V2 on Bedrock (InvokeModel, mocked with
 * aws-sdk-client-mock), the lexical offline adapter, and similarity with precomputed vectors.
 */
import { BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { embeddingSimilarity, lexicalSimilarity } from '../../../lambdas/workflows/turn-pipeline/similarity.ts';
import {
  cosine,
  embeddingsFromEnv,
  lexicalEmbeddings,
  titanEmbeddings,
} from '../../../src/runtime/models/embeddings.ts';

const bedrock = mockClient(BedrockRuntimeClient);
afterEach(() => bedrock.reset());
const body = (embedding: number[]) =>
  new TextEncoder().encode(JSON.stringify({ embedding, inputTextTokenCount: 3 })) as never;

describe('Titan Text Embeddings V2', () => {
  it('sends one InvokeModel per text with the dimensions and normalisation, and returns the vectors in order', async () => {
    bedrock.on(InvokeModelCommand).callsFake((input: { body: string }) => ({
      body: body(JSON.parse(input.body).inputText === 'a' ? [1, 0] : [0, 1]),
    }));
    const model = titanEmbeddings({ client: new BedrockRuntimeClient({ region: 'us-east-1' }) });
    expect(model.name).toBe('bedrock amazon.titan-embed-text-v2:0');
    expect(await model.embed(['a', 'b'])).toEqual([
      [1, 0],
      [0, 1],
    ]);
    const sent = bedrock
      .commandCalls(InvokeModelCommand)
      .map((c) => ({ ...c.args[0].input, body: JSON.parse(c.args[0].input.body as string) }));
    expect(sent[0]).toEqual({
      modelId: 'amazon.titan-embed-text-v2:0',
      contentType: 'application/json',
      accept: 'application/json',
      body: { inputText: 'a', dimensions: 256, normalize: true },
    });
  });

  it('passes throttling through for the toolbox to retry, and refuses an answer without a vector', async () => {
    bedrock
      .on(InvokeModelCommand)
      .rejectsOnce(
        Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 429 } }),
      )
      .resolves({ body: body([]) });
    const model = titanEmbeddings({ client: new BedrockRuntimeClient({ region: 'us-east-1' }) });
    await expect(model.embed(['x'])).rejects.toMatchObject({ name: 'ThrottlingException' });
    await expect(model.embed(['x'])).rejects.toMatchObject({ name: 'InvalidModelOutputError' });
  });

  it('is what the environment selects with EMBEDDINGS_PROVIDER=bedrock; anything else is the lexical adapter', () => {
    expect(
      embeddingsFromEnv({
        EMBEDDINGS_PROVIDER: 'bedrock',
        EMBEDDINGS_MODEL_ID: 'amazon.titan-embed-text-v2:0',
        AWS_REGION: 'us-east-1',
      }).name,
    ).toBe('bedrock amazon.titan-embed-text-v2:0');
    expect(embeddingsFromEnv({}).name).toBe('lexical');
  });
});

describe('similarity over embeddings', () => {
  it('the lexical adapter scores word overlap, and nothing for a paraphrase without shared words', async () => {
    const [same, paraphrase] = await lexicalSimilarity.similarity('I want my money back', [
      'give me my money back',
      'I would like a reimbursement',
    ]);
    expect(same).toBeGreaterThan(0.5);
    expect(paraphrase).toBe(0);
    const [v] = await lexicalEmbeddings().embed(['refunds refunded']);
    expect(cosine(v!, v!)).toBeCloseTo(1);
  });

  it('embeds only the query when every text has a precomputed vector', async () => {
    const seen: string[][] = [];
    const model = {
      name: 'test',
      embed: async (texts: readonly string[]) => (seen.push([...texts]), texts.map(() => [1, 0])),
    };
    const sim = embeddingSimilarity(
      model,
      new Map([
        ['known', [1, 0]],
        ['other', [0, 1]],
      ]),
    );
    expect(await sim.similarity('q', ['known', 'other', 'new'])).toEqual([1, 0, 1]);
    expect(seen).toEqual([['q', 'new']]);
  });
});
