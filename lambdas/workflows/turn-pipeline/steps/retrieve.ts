import { NO_USAGE, defineCodeStep } from 'stepwise';
import { retrieve } from '../pipeline.ts';
import { lexicalSimilarity } from '../similarity.ts';
import { readTurn } from '../turn.ts';

/** 04: rules by scope and scenario candidates by entry examples, scored against the turn (lexical similarity offline; the port takes an embedding model). */
export default defineCodeStep(async ({ def, input }) => {
  const turn = readTurn(def, input);
  const retrieval = await retrieve(turn.agent, turn.session, turn.message, turn.context, lexicalSimilarity);
  const top = [...retrieval.scenarios].sort((a, b) => b.score - a.score)[0];
  return {
    next: '05-filter',
    reason: `${retrieval.rules.length} rules in scope; best scenario ${top ? `${top.id} (${top.score})` : 'none'}`,
    decidedBy: 'code',
    fields: { retrieval },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
