/**
 * The embeddings port: texts in, one vector each out, compared by cosine. Adapters: `bedrock`
 * (Amazon Titan Text Embeddings V2 through InvokeModel, normalised vectors) and `lexical`, the
 * offline adapter: a hashed bag of content words (no model, no I/O, deterministic), whose cosine
 * is word-overlap similarity. A tool that declares `resources.embeddings` gets the environment's
 * adapter (see `embeddingsFromEnv`) and the permission to call it.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import * as z from 'zod';
import { InvalidModelOutputError } from '../../core/errors.ts';
import { lazy } from '../../core/lazy.ts';

export interface EmbeddingModel {
  /**
   * `lexical`, or the provider and model (`bedrock amazon.titan-embed-text-v2:0`): precomputed vectors are kept under
   * it.
   */
  readonly name: string;
  embed(texts: readonly string[]): Promise<number[][]>;
}

/** The Titan model every environment embeds with unless its config says otherwise. */
export const TITAN_V2 = 'amazon.titan-embed-text-v2:0';

const STOP = new Set(
  'a an the i me my we our you your it its is are was were be been am do does did to of in on at for with and or but if so this that these those there here what whats how can could would should will just please about from as by have has had not no yes im id ive thats'.split(
    ' ',
  ),
);

/** Content words, lowercased, with a crude suffix strip so "refunds"/"refunded"/"refunding" meet "refund". */
export function contentWords(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/['’]/g, '')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  )
    .filter((w) => !STOP.has(w))
    .map((w) => (w.length > 4 ? w.replace(/(?:ing|ed|(?<!s)s)$/, '') : w));
}

/** Cosine of two vectors (0 when either is all zeros). */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** FNV-1a: a stable bucket for a word. */
function bucket(word: string, size: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return (h >>> 0) % size;
}

/**
 * The offline adapter: each text as counts of its content words hashed into `dimensions` buckets
 * (wide enough that a handful of words rarely share one). NOT a language model: paraphrases without
 * shared words score 0.
 */
export function lexicalEmbeddings(dimensions = 4096): EmbeddingModel {
  return {
    name: 'lexical',
    async embed(texts) {
      return texts.map((text) => {
        const v = new Array<number>(dimensions).fill(0);
        for (const w of contentWords(text)) v[bucket(w, dimensions)]! += 1;
        return v;
      });
    },
  };
}

export interface TitanEmbeddingsOptions {
  client: BedrockRuntimeClient;
  /** @default amazon.titan-embed-text-v2:0 */
  modelId?: string;
  /** 256, 512 or 1024. @default 256: enough to rank a few hundred short rule texts, and small to store. */
  dimensions?: 256 | 512 | 1024;
  /**
   * InvokeModel calls in flight at once: the model takes one text per call, and a turn's few hundred
   * texts sent at once would meet the account's request quota as throttling.
   * @default 4
   */
  concurrency?: number;
}

const TitanResponse = z.object({ embedding: z.array(z.number()).min(1) });

/**
 * `work` on each item, at most `limit` at a time, results in order. After the first failure no
 * further item starts, and that failure is thrown.
 */
async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await work(items[i]!);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}

/** Bedrock's Titan Text Embeddings V2: one InvokeModel per text (the model takes one), normalised vectors. */
export function titanEmbeddings({
  client,
  modelId = TITAN_V2,
  dimensions = 256,
  concurrency = 4,
}: TitanEmbeddingsOptions): EmbeddingModel {
  const embedOne = async (inputText: string) => {
    // Loaded on the first call (a module that only imports this one never loads the SDK).
    const { InvokeModelCommand } = await import('@aws-sdk/client-bedrock-runtime');
    // SDK errors pass through: a tool's caller (the toolbox) tells transient from permanent.
    const raw = await client.send(
      new InvokeModelCommand({
        modelId,
        contentType: 'application/json',
        accept: 'application/json',
        body: JSON.stringify({ inputText, dimensions, normalize: true }),
      }),
    );
    const parsed = TitanResponse.safeParse(JSON.parse(new TextDecoder().decode(raw.body)));
    if (!parsed.success) throw new InvalidModelOutputError(`bedrock ${modelId} returned no embedding`);
    return parsed.data.embedding;
  };
  return { name: `bedrock ${modelId}`, embed: (texts) => mapBounded(texts, concurrency, embedOne) };
}

/** `EMBEDDINGS_PROVIDER` (`bedrock` | `lexical`, default lexical) and `EMBEDDINGS_MODEL_ID`, as the stack sets them. */
export function embeddingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  traced: <C extends object>(c: C) => C = (c) => c,
): EmbeddingModel {
  if (env.EMBEDDINGS_PROVIDER !== 'bedrock') return lexicalEmbeddings();
  const modelId = env.EMBEDDINGS_MODEL_ID ?? TITAN_V2;
  // The SDK client is built by the first embedding: a function that never embeds never loads it.
  const titan = lazy(async () => {
    const { BedrockRuntimeClient } = await import('@aws-sdk/client-bedrock-runtime');
    return titanEmbeddings({
      client: traced(new BedrockRuntimeClient({ region: env.AWS_REGION, maxAttempts: 1 })),
      modelId,
    });
  });
  return { name: `bedrock ${modelId}`, embed: async (texts) => (await titan()).embed(texts) };
}
