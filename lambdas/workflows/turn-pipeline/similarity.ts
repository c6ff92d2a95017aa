/**
 * How alike two texts are, 0..1: the port retrieval and navigation score with. The default is
 * lexical (cosine over content words, so it runs offline and deterministically); an embedding
 * model fits the same port (`similarity` may call one and cache vectors).
 */
export interface SimilarityModel {
  /** The similarity of `query` to each of `texts`, in order. */
  similarity(query: string, texts: readonly string[]): Promise<number[]>;
}

const STOP = new Set(
  'a an the i me my we our you your it its is are was were be been am do does did to of in on at for with and or but if so this that these those there here what whats how can could would should will just please about from as by have has had not no yes im id ive thats'.split(' '),
);

/** Content words, lowercased, with a crude suffix strip so "refunds"/"refunded"/"refunding" meet "refund". */
export function contentWords(text: string): string[] {
  return (text.toLowerCase().replace(/['’]/g, '').match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((w) => !STOP.has(w))
    .map((w) => (w.length > 4 ? w.replace(/(?:ing|ed|(?<!s)s)$/, '') : w));
}

function cosine(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const count = (ws: string[]) => ws.reduce((m, w) => m.set(w, (m.get(w) ?? 0) + 1), new Map<string, number>());
  const ca = count(a);
  const cb = count(b);
  let dot = 0;
  for (const [w, n] of ca) dot += n * (cb.get(w) ?? 0);
  const norm = (m: Map<string, number>) => Math.sqrt([...m.values()].reduce((s, n) => s + n * n, 0));
  return dot / (norm(ca) * norm(cb));
}

/** Cosine similarity over content words: no model, no I/O. */
export const lexicalSimilarity: SimilarityModel = {
  async similarity(query, texts) {
    const q = contentWords(query);
    return texts.map((t) => Math.round(cosine(q, contentWords(t)) * 1000) / 1000);
  },
};
