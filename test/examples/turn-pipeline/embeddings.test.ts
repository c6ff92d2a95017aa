/**
 * The embeddings port: Titan Text Embeddings V2 on Bedrock (InvokeModel, mocked with
 * aws-sdk-client-mock), the lexical offline adapter, and similarity with precomputed vectors.
 */
import { BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { agentDir, loadAgent } from '../../../lambdas/workflows/turn-pipeline/agent.ts';
import {
  agentTexts,
  embeddingSimilarity,
  lexicalSimilarity,
} from '../../../lambdas/workflows/turn-pipeline/similarity.ts';
import similarityTool from '../../../lambdas/workflows/turn-pipeline/tools/similarity.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import {
  cosine,
  embeddingsFromEnv,
  lexicalEmbeddings,
  titanEmbeddings,
} from '../../../src/runtime/models/embeddings.ts';

const bedrock = mockClient(BedrockRuntimeClient);
afterEach(() => bedrock.reset());
// The files of a worker share one module graph: the real client comes back for the next file.
afterAll(() => bedrock.restore());
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

  it('keeps at most four calls in flight, and starts none after a failure', async () => {
    let inFlight = 0;
    let most = 0;
    const sent: string[] = [];
    const client = {
      send: async (command: InvokeModelCommand) => {
        const text = JSON.parse(command.input.body as string).inputText as string;
        sent.push(text);
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        if (text === 'fail') throw Object.assign(new Error('denied'), { name: 'AccessDeniedException' });
        return { body: body([1, 0]) };
      },
    } as unknown as BedrockRuntimeClient;
    const texts = Array.from({ length: 30 }, (_, i) => `text ${i}`);
    expect(await titanEmbeddings({ client }).embed(texts)).toHaveLength(30);
    expect(most).toBe(4);
    expect(sent).toEqual(texts);
    sent.length = 0;
    await expect(titanEmbeddings({ client, concurrency: 2 }).embed(['fail', ...texts])).rejects.toMatchObject({
      name: 'AccessDeniedException',
    });
    expect(sent).toHaveLength(2);
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

  it('embeds a known text without a precomputed vector once, and any other text on every call', async () => {
    const seen: string[][] = [];
    const model = {
      name: 'test',
      embed: async (texts: readonly string[]) => (
        seen.push([...texts]), texts.map((t) => (t === 'q' ? [1, 0] : [0, 1]))
      ),
    };
    const sim = embeddingSimilarity(model, new Map(), new Set(['rule a', 'rule b']));
    expect(await sim.similarity('q', ['rule a', 'rule b', 'a reply'])).toEqual([0, 0, 0]);
    expect(await sim.similarity('q', ['rule b', 'rule a', 'a reply'])).toEqual([0, 0, 0]);
    expect(seen).toEqual([
      ['q', 'rule a', 'rule b', 'a reply'],
      ['q', 'a reply'],
    ]);
  });
});

describe('the similarity tool on Bedrock', () => {
  it("embeds the agent's texts on the first turn only, and the turn's own text on each", async () => {
    bedrock.on(InvokeModelCommand).resolves({ body: body([1, 0]) });
    const { dir, manifest } = loadWorkflow('turn-pipeline');
    const texts = agentTexts(loadAgent(agentDir(dir), manifest.tools));
    const aws = { dynamo: () => expect.fail('no table'), traced: <C>(c: C) => c };
    const port = similarityTool.connect!({ EMBEDDINGS_PROVIDER: 'bedrock', AWS_REGION: 'us-east-1' }, aws);
    const ctx = {} as never;
    await similarityTool.run({ query: 'first turn', texts }, ctx, port);
    expect(bedrock.commandCalls(InvokeModelCommand)).toHaveLength(texts.length + 1);
    bedrock.resetHistory();
    await similarityTool.run({ query: 'second turn', texts }, ctx, port);
    expect(bedrock.commandCalls(InvokeModelCommand)).toHaveLength(1);
  });
});
