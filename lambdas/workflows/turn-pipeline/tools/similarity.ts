import { defineTool, loadWorkflow } from 'stepwise';
import { embeddingsFromEnv } from 'stepwise/embeddings';
import * as z from 'zod';
import { agentDir, loadAgent } from '../agent.ts';
import { agentTexts, embeddingSimilarity, lexicalSimilarity, precomputedVectors } from '../similarity.ts';

/**
 * How alike the turn is to known texts (rule conditions, scenario and transition examples) or to
 * the reply: cosine of embeddings from the environment's model (Titan Text Embeddings V2 on AWS,
 * the lexical adapter offline), with the agent's vectors computed before deployment or kept from
 * the container's first turn.
 */
export default defineTool({
  name: 'similarity',
  description: 'Score how alike a query is to each of some texts (0 to 1), by embeddings.',
  input: z.strictObject({ query: z.string().max(8000), texts: z.array(z.string().max(2000)).min(1).max(300) }),
  personal: ['query'],
  resources: { embeddings: true },
  connect: (env, aws) => {
    const model = embeddingsFromEnv(env, aws.traced);
    const { dir, manifest } = loadWorkflow('turn-pipeline');
    const agent = agentDir(dir);
    return {
      model: model.name,
      similarity: embeddingSimilarity(
        model,
        precomputedVectors(agent, model.name),
        new Set(agentTexts(loadAgent(agent, manifest.tools))),
      ),
    };
  },
  evalPorts: () => ({ model: 'lexical', similarity: lexicalSimilarity }),
  async run({ query, texts }, _ctx, port) {
    return { model: port.model, scores: await port.similarity.similarity(query, texts) };
  },
});
