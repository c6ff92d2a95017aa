/**
 * `stepwise/embeddings`: the embeddings port, for a tool that declares `resources: { embeddings: true }`. On AWS
 * `embeddingsFromEnv` is the environment's model (Bedrock's Titan Text Embeddings V2 unless `embeddings` in
 * stepwise.config.ts names another, its InvokeModel granted to the tool's steps); offline and without the resource, the
 * lexical stand-in (a hashed bag of content words, no model). Vectors are compared by `cosine`.
 *
 * @example
 * import { defineTool } from 'stepwise';
 * import { cosine, embeddingsFromEnv } from 'stepwise/embeddings';
 * import * as z from 'zod';
 *
 * export default defineTool({
 *   name: 'closest_text',
 *   description: 'How alike a query is to each of some texts, 0 to 1.',
 *   input: z.strictObject({ query: z.string(), texts: z.array(z.string()).min(1) }),
 *   resources: { embeddings: true },
 *   connect: (env, aws) => embeddingsFromEnv(env, aws.traced),
 *   async run({ query, texts }, _ctx, model) {
 *     const [q, ...vectors] = await model.embed([query, ...texts]);
 *     return { scores: vectors.map((v) => cosine(q!, v)) };
 *   },
 * });
 */
export {
  contentWords,
  cosine,
  type EmbeddingModel,
  embeddingsFromEnv,
  lexicalEmbeddings,
  TITAN_V2,
} from './runtime/models/embeddings.ts';
