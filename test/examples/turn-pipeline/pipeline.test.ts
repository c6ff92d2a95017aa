/**
 * The turn pipeline's rules on its pure core, over the example agent's own data files:
 * stickiness and exits, the stuck user, rule fire limits and cooldowns across turns, GLOBAL hard
 * constraints on off-topic turns, both enforcement lanes, relevance with refusal bypass.
 */
import { describe, expect, it } from 'vitest';
import { type Agent, agentDir, loadAgent } from '../../../lambdas/workflows/turn-pipeline/agent.ts';
import {
  enforce,
  enforcementVariables,
  MEMORY_RECALLED,
  navigate,
  type Retrieval,
  retrieve,
  selectRules,
  type TurnContext,
} from '../../../lambdas/workflows/turn-pipeline/pipeline.ts';
import {
  EPISODE_TEXT_CHARS,
  EPISODES_KEPT,
  episodeOf,
  newSession,
  type Session,
  SessionSchema,
} from '../../../lambdas/workflows/turn-pipeline/session.ts';
import { lexicalSimilarity } from '../../../lambdas/workflows/turn-pipeline/similarity.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';

const def = loadWorkflow('turn-pipeline');
const agent = loadAgent(agentDir(def.dir), def.manifest.tools);
const ctx = (detectedIntent: string | null, intentConfidence: number): TurnContext => ({
  entities: {},
  detectedIntent,
  intentConfidence,
  isAmbiguous: false,
});
const at = (scenario: string | null, step: string | null, extra: Partial<Session> = {}): Session => ({
  ...newSession('s1'),
  activeScenario: scenario,
  activeStep: step,
  ...extra,
});

async function turn(session: Session, message: string, context: TurnContext, a: Agent = agent) {
  const retrieval = await retrieve(a, session, message, context, lexicalSimilarity);
  return { retrieval, nav: navigate(a.scenarioFilter, a.scenarios, session, retrieval) };
}

describe('memory episodes', () => {
  const episodes = [
    episodeOf(1, 'refund', 'My trail running shoes fell apart, I want a refund', 'Which order was it?'),
    episodeOf(2, null, 'Do you ship to Canada?', 'Yes, we ship to Canada.'),
  ];

  it('recalls the earlier episode most like the turn, and not the unrelated one', async () => {
    const { retrieval } = await turn(at(null, null, { episodes }), 'about those trail running shoes', ctx(null, 0.9));
    expect(retrieval.memory.map((e) => e.turn)).toEqual([1]);
    expect(retrieval.memory[0]).toMatchObject({ user: episodes[0]!.user, agent: 'Which order was it?' });
  });

  it('recalls nothing in a new session', async () => {
    const { retrieval } = await turn(at(null, null), 'about those trail running shoes', ctx(null, 0.9));
    expect(retrieval.memory).toEqual([]);
  });

  it('keeps the latest episodes only, each text bounded', () => {
    const long = episodeOf(3, null, 'x'.repeat(5000), 'y');
    expect(long.user.length).toBe(EPISODE_TEXT_CHARS);
    expect(SessionSchema.parse({ ...newSession('s1'), episodes: undefined }).episodes).toEqual([]);
    expect(EPISODES_KEPT).toBeGreaterThan(MEMORY_RECALLED);
  });
});

describe('scenario navigation with stickiness', () => {
  it('enters a scenario from none on a clear request', async () => {
    const { nav } = await turn(at(null, null), 'I want a refund', ctx('refund_request', 0.9));
    expect(nav).toMatchObject({ action: 'enter', scenario: 'refund', step: 'identify_order' });
  });

  it('keeps a tangential price question inside the refund scenario', async () => {
    const { nav, retrieval } = await turn(at('refund', 'confirm_refund'), "what's the price?", ctx('ask_price', 0.6));
    expect(retrieval.scenarios.find((s) => s.id === 'pricing')!.score).toBeGreaterThanOrEqual(
      agent.scenarioFilter.min_entry_score,
    );
    expect(nav).toMatchObject({ action: 'stay', scenario: 'refund', step: 'confirm_refund' });
  });

  it('lets a confident exit through, but not the same intent below the threshold', async () => {
    const confident = await turn(
      at('refund', 'confirm_refund'),
      'Actually, where is my order A-10235?',
      ctx('track_order', 0.92),
    );
    expect(confident.nav).toMatchObject({ action: 'exit', scenario: 'track_order', step: 'status' });
    const unsure = await turn(
      at('refund', 'confirm_refund'),
      'Actually, where is my order A-10235?',
      ctx('track_order', 0.8),
    );
    expect(unsure.nav).toMatchObject({ action: 'stay', scenario: 'refund' });
  });

  it('stickiness is what keeps the scenario: without the boost an equal score would leave it', () => {
    const retrieval: Retrieval = {
      rules: [],
      scenarios: [
        { id: 'refund', score: 0.8 },
        { id: 'track_order', score: 0.9 },
      ],
      transitions: [],
      memory: [],
    };
    const session = at('refund', 'submitted');
    expect(navigate(agent.scenarioFilter, agent.scenarios, session, retrieval).action).toBe('stay');
    expect(navigate({ ...agent.scenarioFilter, stickiness_boost: 0 }, agent.scenarios, session, retrieval).action).toBe(
      'exit',
    );
  });

  it('takes a transition at or above min_transition_score', async () => {
    const { nav } = await turn(at('refund', 'confirm_refund'), 'yes please', ctx('affirm', 0.9));
    expect(nav).toMatchObject({ action: 'transition', step: 'submitted' });
  });

  it('the stuck user: a "maybe" at a yes/no step is clarified max_clarifications_per_step times, then escalated', async () => {
    let session = at('refund', 'confirm_refund');
    const actions: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { nav } = await turn(session, 'maybe', ctx('unsure', 0.9));
      actions.push(nav.action);
      session = { ...session, turn: session.turn + 1, clarifications: { 'refund/confirm_refund': nav.clarifications } };
    }
    expect(actions).toEqual(['clarify', 'clarify', 'escalate']);
    expect(agent.scenarioFilter.max_clarifications_per_step).toBe(2);
  });

  it('fallback_behavior escalate and stay are honoured', async () => {
    const retrieval = (await turn(at('refund', 'confirm_refund'), 'maybe', ctx('unsure', 0.9))).retrieval;
    expect(
      navigate(
        { ...agent.scenarioFilter, fallback_behavior: 'escalate' },
        agent.scenarios,
        at('refund', 'confirm_refund'),
        retrieval,
      ).action,
    ).toBe('escalate');
    expect(
      navigate(
        { ...agent.scenarioFilter, fallback_behavior: 'stay' },
        agent.scenarios,
        at('refund', 'confirm_refund'),
        retrieval,
      ).action,
    ).toBe('stay');
  });
});

describe('rule retrieval and selection', () => {
  it('retrieves GLOBAL rules and the rules of the active scenario and step only', async () => {
    const { retrieval } = await turn(at('refund', 'confirm_refund'), 'yes', ctx('affirm', 0.9));
    const ids = retrieval.rules.map((r) => r.id);
    expect(ids).toEqual(
      expect.arrayContaining(['refund-limit', 'no-competitor', 'return-window', 'confirm-before-submit']),
    );
    expect(ids).not.toContain('order-status');
  });

  it('enforces every GLOBAL hard constraint on an off-topic turn, matched or not', async () => {
    const session = at(null, null);
    const { retrieval, nav } = await turn(session, 'Is it going to rain tomorrow?', ctx('other', 0.3));
    const selection = selectRules(agent, session, retrieval, nav, true);
    expect(selection.matched).toEqual([]);
    expect(selection.enforce.sort()).toEqual(['no-competitor', 'own-links-only', 'refund-limit', 'stay-polite']);
    expect(selectRules(agent, session, retrieval, nav, false).enforce).toEqual([]);
  });

  it('max_fires_per_session holds across turns', async () => {
    let session = at(null, null);
    const fired: boolean[] = [];
    for (let t = 0; t < 3; t++) {
      const { retrieval, nav } = await turn(session, 'Thanks a lot!', ctx('thanks', 0.9));
      const selection = selectRules(agent, session, retrieval, nav, true);
      fired.push(selection.matched.includes('rate-conversation'));
      const turnNo = session.turn + 1;
      const fires = { ...session.ruleFires };
      for (const id of selection.matched) fires[id] = { count: (fires[id]?.count ?? 0) + 1, lastTurn: turnNo };
      session = { ...session, turn: turnNo, ruleFires: fires };
    }
    expect(fired).toEqual([true, false, false]);
  });

  it('cooldown_turns holds across turns: fired at turn 1, held back for 2 turns, fires again at turn 4', async () => {
    let session = at('refund', 'submitted');
    const fired: boolean[] = [];
    for (let t = 0; t < 4; t++) {
      const { retrieval, nav } = await turn(session, 'how do I return the item?', ctx('return_request', 0.8));
      const selection = selectRules(agent, session, retrieval, nav, true);
      fired.push(selection.matched.includes('return-label'));
      if (!fired.at(-1)) expect(selection.suppressed.map((s) => s.id)).toContain('return-label');
      const turnNo = session.turn + 1;
      const fires = { ...session.ruleFires };
      for (const id of selection.matched) fires[id] = { count: (fires[id]?.count ?? 0) + 1, lastTurn: turnNo };
      session = { ...session, turn: turnNo, ruleFires: fires };
    }
    expect(fired).toEqual([true, false, false, true]);
  });
});

describe('two-lane enforcement', () => {
  const polite = { 'stay-polite': { passed: true }, grounding: { passed: true, score: 1 } };
  const run = (
    response: string,
    verdicts: unknown = polite,
    relevance: number | null = 0.5,
    sessionVars: Record<string, unknown> = {},
  ) =>
    enforce({
      agent,
      enforce: ['refund-limit', 'no-competitor', 'own-links-only', 'stay-polite'],
      message: 'refund',
      response,
      variables: enforcementVariables({}, sessionVars, response),
      judges: [{ model: 'judge', verdicts }],
      relevance,
    });
  const panel = (agentCfg: typeof agent, ...verdicts: unknown[]) =>
    enforce({
      agent: agentCfg,
      enforce: ['stay-polite'],
      message: 'refund',
      response: 'Fine.',
      variables: {},
      judges: verdicts.map((v, i) => ({ model: `m${i + 1}`, verdicts: v })),
      relevance: null,
    });
  const withCfg = (cfg: Partial<typeof agent.enforcement>) => ({
    ...agent,
    enforcement: { ...agent.enforcement, ...cfg },
  });
  const failed = (verdicts: ReturnType<typeof run>) =>
    verdicts.filter((v) => !v.passed).map((v) => `${v.check}/${v.lane}`);

  it('lane 1: "$75 refund" breaks refund-limit, $30 does not, an approval in the session allows it', () => {
    const over = run("I'll process a $75 refund for you.");
    expect(failed(over)).toEqual(['refund-limit/deterministic']);
    expect(over.find((v) => v.check === 'refund-limit')!.variables).toEqual({
      'response.max_amount': 75,
      'session.refund_approved': null,
    });
    expect(failed(run("I'll process a $30 refund for you."))).toEqual([]);
    expect(failed(run("I'll process a $75 refund for you.", polite, 0.5, { refund_approved: true }))).toEqual([]);
  });

  it('lane 1: competitor mentions and foreign links', () => {
    expect(failed(run('MegaMart has it cheaper.'))).toEqual(['no-competitor/deterministic']);
    expect(failed(run('See https://refunds-now.example.net/claim'))).toEqual(['own-links-only/deterministic']);
    expect(failed(run('See https://shop.example.com/returns'))).toEqual([]);
  });

  it('lane 2: the judge decides rules without an expression', () => {
    expect(
      failed(
        run('Well, that was your own fault.', {
          ...polite,
          'stay-polite': { passed: false, reason: 'blames the customer' },
        }),
      ),
    ).toEqual(['stay-polite/judge']);
    expect(run('Fine.').find((v) => v.check === 'stay-polite')).toEqual({
      check: 'stay-polite',
      lane: 'judge',
      passed: true,
    });
  });

  it('lane 2 fails closed: a missing or unparsable verdict, or no judge report at all, is a violation by default', () => {
    expect(failed(run('Fine.', {}))).toEqual(['stay-polite/judge', 'grounding/judge']);
    expect(run('Fine.', {}).find((v) => v.check === 'stay-polite')!.message).toBe(
      'judge: no verdict from the judge (missing_verdict: fail)',
    );
    expect(failed(run('Fine.', { ...polite, 'stay-polite': { passed: 'yes' } }))).toEqual(['stay-polite/judge']);
    expect(failed(run('Fine.', 'not an object'))).toEqual(['stay-polite/judge', 'grounding/judge']);
    const none = enforce({
      agent,
      enforce: ['stay-polite'],
      message: 'x',
      response: 'Fine.',
      variables: {},
      judges: [],
      relevance: null,
    });
    expect(none.filter((v) => !v.passed).map((v) => v.message)).toEqual([
      '(none): no judge report from the judge (missing_verdict: fail)',
      '(none): no judge report from the judge (missing_verdict: fail)',
    ]);
  });

  it('missing_verdict: pass records a missing verdict without failing the rule', () => {
    const open = enforce({
      agent: withCfg({ missing_verdict: 'pass' }),
      enforce: ['stay-polite'],
      message: 'x',
      response: 'Fine.',
      variables: {},
      judges: [{ model: 'judge', verdicts: {} }],
      relevance: null,
    });
    expect(open.find((v) => v.check === 'stay-polite')).toEqual({
      check: 'stay-polite',
      lane: 'judge',
      passed: true,
      message: 'judge: no verdict from the judge (missing_verdict: pass)',
    });
  });

  it('several judges combine by judge_combine: all, majority or any', () => {
    const ok = { 'stay-polite': { passed: true }, grounding: { passed: true } };
    const no = { 'stay-polite': { passed: false, reason: 'blames' }, grounding: { passed: true } };
    const polite = (cfg: Partial<typeof agent.enforcement>, ...v: unknown[]) =>
      panel(withCfg(cfg), ...v).find((x) => x.check === 'stay-polite')!;
    expect(polite({ judge_combine: 'all' }, ok, ok, no).passed).toBe(false);
    expect(polite({ judge_combine: 'majority' }, ok, ok, no)).toMatchObject({
      passed: true,
      variables: { judges: ['m1: passed', 'm2: passed', 'm3: failed'] },
    });
    expect(polite({ judge_combine: 'majority' }, ok, no).passed).toBe(false);
    expect(polite({ judge_combine: 'any' }, no, no, ok).passed).toBe(true);
    // A judge without a verdict counts as missing_verdict says: a failure by default, even under `any` when nobody passed.
    expect(polite({ judge_combine: 'majority' }, ok, {}, {}).passed).toBe(false);
    expect(polite({ judge_combine: 'majority', missing_verdict: 'pass' }, ok, {}, no).passed).toBe(true);
  });

  it("grounding: the judge's score decides against grounding_threshold", () => {
    const grounded = (score: number) =>
      run('Your order is delivered.', { 'stay-polite': { passed: true }, grounding: { passed: true, score } }).find(
        (v) => v.check === 'grounding',
      )!.passed;
    expect(grounded(0.9)).toBe(true);
    expect(grounded(0.5)).toBe(false);
    expect(
      failed(
        run('Fine.', {
          'stay-polite': { passed: true },
          grounding: { passed: false, reason: 'the delivery date is not in the order data' },
        }),
      ),
    ).toEqual(['grounding/judge']);
  });

  it('relevance: an unrelated answer fails, a refusal passes through the bypass, a content-free query is not judged', () => {
    expect(failed(run('Our opening hours are nine to five.', polite, 0))).toEqual(['relevance/deterministic']);
    expect(failed(run("I'm not able to help with that.", polite, 0))).toEqual([]);
    expect(failed(run('Hello! How can I help?', polite, null))).toEqual([]);
    expect(
      enforce({
        agent: withCfg({ relevance_refusal_bypass: false, grounding_check_enabled: false }),
        enforce: [],
        message: 'x',
        response: "I'm not able to help with that.",
        variables: {},
        judges: [],
        relevance: 0,
      }),
    ).toEqual([expect.objectContaining({ check: 'relevance', passed: false })]);
  });

  it('lanes can be switched off', () => {
    const off = {
      ...agent,
      enforcement: {
        ...agent.enforcement,
        deterministic_enabled: false,
        llm_judge_enabled: false,
        relevance_check_enabled: false,
      },
    };
    expect(
      enforce({
        agent: off,
        enforce: ['refund-limit', 'stay-polite'],
        message: 'x',
        response: '$999 refund',
        variables: enforcementVariables({}, {}, '$999 refund'),
        judges: [],
        relevance: 0,
      }),
    ).toEqual([]);
  });
});
