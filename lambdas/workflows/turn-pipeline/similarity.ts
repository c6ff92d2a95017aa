/**
 * How alike two texts are, 0..1: the port retrieval, navigation and the relevance check score
 * with, over the embeddings port (src/runtime/models/embeddings.ts). Known texts (rule conditions,
 * scenario and transition examples) have vectors computed before deployment (`agent/vectors.yaml`,
 * `stepwise agent-vectors`), or else embedded on a container's first turn and kept, so a turn
 * embeds only its own text.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CallContext, Toolbox, ToolCallRecord } from 'stepwise';
import { readDefinitionYaml, StepFailedError } from 'stepwise';
import { contentWords, cosine, type EmbeddingModel, lexicalEmbeddings } from 'stepwise/embeddings';
import * as z from 'zod';
import type { Agent } from './agent.ts';

export { contentWords };

export interface SimilarityModel {
  /** The similarity of `query` to each of `texts`, in order. */
  similarity(query: string, texts: readonly string[]): Promise<number[]>;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/**
 * Similarity by cosine of embeddings. A text with a precomputed vector is not embedded; a text of
 * `keep` (the agent's known texts) without one is embedded on first use and kept, so only a cold
 * container's first turn embeds them. Other texts (a reply) are embedded on every call.
 */
export function embeddingSimilarity(
  model: EmbeddingModel,
  precomputed: ReadonlyMap<string, number[]> = new Map(),
  keep: ReadonlySet<string> = new Set(),
): SimilarityModel {
  const kept = new Map(precomputed);
  return {
    async similarity(query, texts) {
      const missing = [...new Set(texts.filter((t) => !kept.has(t)))];
      const vectors = await model.embed([query, ...missing]);
      const fresh = new Map(missing.map((t, i) => [t, vectors[i + 1]!] as const));
      for (const [t, v] of fresh) if (keep.has(t)) kept.set(t, v);
      return texts.map((t) => round(Math.max(0, cosine(vectors[0]!, (kept.get(t) ?? fresh.get(t))!))));
    },
  };
}

/** Cosine over content words (the offline adapter): no model, no I/O. */
export const lexicalSimilarity: SimilarityModel = embeddingSimilarity(lexicalEmbeddings());

/** The texts of an agent that have vectors before deployment: what retrieval compares turns with. */
export function agentTexts(agent: Agent): string[] {
  const texts = [
    ...agent.scenarios.flatMap((s) => [
      ...s.entry_examples,
      ...s.steps.flatMap((st) => st.transitions.flatMap((t) => t.examples)),
    ]),
    ...agent.rules.map((r) => r.condition_text),
  ];
  return [...new Set(texts)].sort();
}

/** `agent/vectors.yaml`: per embedding model (its `name`), text → vector. */
export const VectorsFileSchema = z
  .object({ models: z.record(z.string(), z.record(z.string(), z.array(z.number()))) })
  .strict();
export const VECTORS_FILE = 'vectors.yaml';

/** The precomputed vectors of `model` in an agent folder (none when the file or the model is absent). */
export function precomputedVectors(agentFolder: string, model: string): Map<string, number[]> {
  const file = join(agentFolder, VECTORS_FILE);
  if (process.env.STEPWISE_LAMBDA_BUNDLE === undefined && !existsSync(file)) return new Map();
  try {
    return new Map(Object.entries(VectorsFileSchema.parse(readDefinitionYaml(file)).models[model] ?? {}));
  } catch {
    return new Map();
  }
}

/**
 * A step's similarity through the `similarity` tool (its embedding model and permissions are the
 * tool's): every call is recorded in `calls`; a failed one fails the step.
 */
export function toolSimilarity(toolbox: Toolbox, ctx: CallContext, calls: ToolCallRecord[]): SimilarityModel {
  return {
    async similarity(query, texts) {
      if (texts.length === 0) return [];
      const call = await toolbox.execute('similarity', { query, texts: [...texts] }, ctx);
      calls.push(call);
      if (call.error !== undefined) throw new StepFailedError(`similarity: ${call.error}`);
      return (call.result as { scores: number[] }).scores;
    },
  };
}
