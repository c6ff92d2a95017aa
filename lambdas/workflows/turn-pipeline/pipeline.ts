/**
 * The pure core of the turn pipeline: retrieval by scope, scenario navigation with
 * stickiness, rule filtering with fire limits and cooldowns, and two-lane enforcement. No I/O:
 * the code steps in `steps/` read state, call these, and route on the result.
 */
import type { GuardVerdict } from 'stepwise';
import { compileExpression, responseFacts } from 'stepwise';
import { lookup } from 'stepwise/templates';
import * as z from 'zod';
import type { Agent, EnforcementConfig, Rule, Scenario, ScenarioFilterConfig } from './agent.ts';
import type { Episode, Session } from './session.ts';
import type { SimilarityModel } from './similarity.ts';

/** What step 02 extracted from the user message (one model call for entities, intent and ambiguity). */
export interface TurnContext {
  entities: Record<string, unknown>;
  detectedIntent: string | null;
  intentConfidence: number;
  isAmbiguous: boolean;
  ambiguityReason?: string;
}

/**
 * The ambiguity exit, decided by code (whatever route the model chose): why the turn must be clarified (flagged
 * ambiguous, or an intent confidence below `minConfidence`), or undefined when it may go on.
 */
export function ambiguity(ctx: TurnContext, minConfidence: number): string | undefined {
  if (ctx.isAmbiguous) return 'the message is flagged ambiguous';
  if (ctx.intentConfidence < minConfidence)
    return `intent confidence ${ctx.intentConfidence} is below ${minConfidence}`;
  return undefined;
}

export interface ScoredRule {
  id: string;
  score: number;
}
export interface Retrieval {
  /** Rules in scope (GLOBAL, the active and candidate scenarios, the active step), with their match score. */
  rules: ScoredRule[];
  /** Every scenario with its entry score (before stickiness). */
  scenarios: { id: string; score: number }[];
  /** The active step's transitions with their scores. */
  transitions: { to: string; score: number }[];
  /** Memory: the earlier episodes of the session most like the turn (at most `MEMORY_RECALLED`, best first). */
  memory: (Episode & { score: number })[];
}

/** Episodes recalled into generation per turn, and the similarity an episode needs to be recalled. */
export const MEMORY_RECALLED = 3;
export const MEMORY_MIN_SCORE = 0.2;

/** The earlier episodes whose user message is most like the turn (`scores`: text → similarity). */
function recall(episodes: readonly Episode[], scores: ReadonlyMap<string, number>): Retrieval['memory'] {
  return episodes
    .map((e) => ({ ...e, score: scores.get(e.user) ?? 0 }))
    .filter((e) => e.score >= MEMORY_MIN_SCORE)
    .sort((a, b) => b.score - a.score || b.turn - a.turn)
    .slice(0, MEMORY_RECALLED);
}

const round = (n: number) => Math.round(n * 1000) / 1000;
const stepKey = (scenario: string | null, step: string | null) => `${scenario ?? '-'}/${step ?? '-'}`;

/** A rule's scope is live for (scenario, step). */
export function inScope(rule: Rule, scenario: string | null, step: string | null): boolean {
  if (rule.scope === 'GLOBAL') return true;
  if (rule.scope === 'SCENARIO') return scenario !== null && rule.scope_id === scenario;
  return scenario !== null && step !== null && rule.scope_id === `${scenario}/${step}`;
}

const intentScore = (intents: readonly string[], ctx: TurnContext) =>
  ctx.detectedIntent !== null && intents.includes(ctx.detectedIntent) ? ctx.intentConfidence : 0;

/**
 * Retrieval (pipeline stage 2): scenario candidates by their intent label (scored with the
 * intent's confidence) or else their entry examples (similarity × `example_weight`),
 * the active step's transitions, and the rules whose scope is live now or would be in a
 * candidate scenario, each scored against the turn; and the session's memory episodes most like
 * the turn, for generation.
 */
export async function retrieve(
  agent: Agent,
  session: Session,
  message: string,
  ctx: TurnContext,
  similarity: SimilarityModel,
): Promise<Retrieval> {
  const cfg = agent.scenarioFilter;
  const step = activeStep(agent, session);
  // One similarity call for every text the turn is compared with (one embedding of the turn).
  const texts = [
    ...new Set([
      ...agent.scenarios.flatMap((s) => s.entry_examples),
      ...(step?.transitions.flatMap((t) => t.examples) ?? []),
      ...agent.rules.filter((r) => r.enabled).map((r) => r.condition_text),
      ...session.episodes.map((e) => e.user),
    ]),
  ];
  const scores = new Map((await similarity.similarity(message, texts)).map((score, i) => [texts[i]!, score]));
  const best = (of: readonly string[]) => Math.max(0, ...of.map((t) => scores.get(t) ?? 0));
  const scenarios = agent.scenarios.map((s) => {
    const named = intentScore([s.intent_label], ctx);
    return { id: s.id, score: round(named > 0 ? named : cfg.example_weight * best(s.entry_examples)) };
  });
  const transitions = step
    ? step.transitions.map((t) => ({ to: t.to, score: round(Math.max(intentScore(t.intents, ctx), best(t.examples))) }))
    : [];
  const candidates = new Set(scenarios.filter((s) => s.score >= cfg.min_entry_score).map((s) => s.id));
  const live = agent.rules.filter(
    (r) =>
      r.enabled &&
      (inScope(r, session.activeScenario, session.activeStep) ||
        (r.scope === 'SCENARIO' && candidates.has(r.scope_id!)) ||
        (r.scope === 'STEP' && candidates.has(r.scope_id!.split('/')[0]!))),
  );
  const rules = live.map((r) => ({
    id: r.id,
    score: round(Math.max(intentScore(r.intents, ctx), best([r.condition_text]))),
  }));
  return { rules, scenarios, transitions, memory: recall(session.episodes, scores) };
}

function activeStep(agent: Agent, session: Pick<Session, 'activeScenario' | 'activeStep'>) {
  return agent.scenarios.find((s) => s.id === session.activeScenario)?.steps.find((st) => st.id === session.activeStep);
}

export type NavigationAction = 'none' | 'enter' | 'stay' | 'transition' | 'complete' | 'exit' | 'clarify' | 'escalate';

export interface Navigation {
  action: NavigationAction;
  scenario: string | null;
  step: string | null;
  reason: string;
  /** Clarifications asked at the (unchanged) step, this turn's included. */
  clarifications: number;
}

/**
 * Scenario navigation with stickiness (stage 3): the active scenario's score gets
 * `stickiness_boost`; another scenario takes over only at `exit_intent_threshold` or above and
 * above the boosted score. Inside the scenario, the best transition at `min_transition_score` or
 * above is taken. A turn that takes no transition at a step that waits for one, and that relates
 * to no scenario (a "maybe" at a yes/no step), gets `fallback_behavior`: `clarify` until
 * `max_clarifications_per_step`, then escalate. A tangent that relates to another scenario stays.
 */
export function navigate(
  cfg: ScenarioFilterConfig,
  scenarios: readonly Scenario[],
  session: Session,
  retrieval: Retrieval,
): Navigation {
  const current = { scenario: session.activeScenario, step: session.activeStep };
  const asked = session.clarifications[stepKey(current.scenario, current.step)] ?? 0;
  const stay = (reason: string): Navigation => ({
    action: current.scenario ? 'stay' : 'none',
    ...current,
    reason,
    clarifications: asked,
  });
  if (!cfg.enabled) return stay('scenario navigation is off');
  const ranked = [...retrieval.scenarios].sort((a, b) => b.score - a.score);
  const entry = (id: string) => scenarios.find((s) => s.id === id)!.entry_step;
  if (!current.scenario) {
    const best = ranked[0];
    if (best && best.score >= cfg.min_entry_score)
      return {
        action: 'enter',
        scenario: best.id,
        step: entry(best.id),
        reason: `entered ${best.id} (score ${best.score})`,
        clarifications: 0,
      };
    return stay(`no scenario scores ${cfg.min_entry_score} or more`);
  }
  const own = round((retrieval.scenarios.find((s) => s.id === current.scenario)?.score ?? 0) + cfg.stickiness_boost);
  const other = ranked.find((s) => s.id !== current.scenario);
  if (other && other.score >= cfg.exit_intent_threshold && other.score > own)
    return {
      action: 'exit',
      scenario: other.id,
      step: entry(other.id),
      reason: `left ${current.scenario} for ${other.id} (score ${other.score} >= ${cfg.exit_intent_threshold}, ${current.scenario} ${own} with stickiness)`,
      clarifications: 0,
    };
  const best = [...retrieval.transitions].sort((a, b) => b.score - a.score)[0];
  if (best && best.score >= cfg.min_transition_score) {
    if (best.to === 'END')
      return {
        action: 'complete',
        scenario: null,
        step: null,
        reason: `completed ${current.scenario} (score ${best.score})`,
        clarifications: 0,
      };
    return {
      action: 'transition',
      scenario: current.scenario,
      step: best.to,
      reason: `${current.step} → ${best.to} (score ${best.score})`,
      clarifications: 0,
    };
  }
  const tangent = other && other.score >= cfg.min_entry_score;
  if (retrieval.transitions.length === 0 || tangent || cfg.fallback_behavior === 'stay')
    return stay(
      tangent
        ? `stayed in ${current.scenario}: ${other.id} scored ${other.score}, below ${cfg.exit_intent_threshold} (stickiness)`
        : `stayed at ${current.step}`,
    );
  if (cfg.fallback_behavior === 'clarify' && asked < cfg.max_clarifications_per_step)
    return {
      action: 'clarify',
      ...current,
      reason: `no transition of ${current.step} matched: clarification ${asked + 1} of ${cfg.max_clarifications_per_step}`,
      clarifications: asked + 1,
    };
  return {
    action: 'escalate',
    ...current,
    reason: `no transition of ${current.step} matched after ${asked} clarification(s): escalated`,
    clarifications: asked,
  };
}

export interface RuleSelection {
  /** Rules that apply this turn, by priority (highest first): their action_text goes into generation, their tools run. */
  matched: string[];
  /** Rules to enforce on the response: matched hard constraints and, with `always_enforce_global`, every GLOBAL hard constraint. */
  enforce: string[];
  /** Rules that matched but were held back, with why (fire limit, cooldown). */
  suppressed: { id: string; why: string }[];
}

/**
 * Rule filtering (stage 3): the retrieved rules whose scope is live after navigation and whose
 * score reaches `rule_match_threshold`, less those at `max_fires_per_session` or within
 * `cooldown_turns` of their last fire; then what enforcement checks.
 */
export function selectRules(
  agent: Agent,
  session: Session,
  retrieval: Retrieval,
  nav: Pick<Navigation, 'scenario' | 'step'>,
  alwaysEnforceGlobal: boolean,
): RuleSelection {
  const byId = new Map(agent.rules.map((r) => [r.id, r]));
  const turn = session.turn + 1;
  const suppressed: RuleSelection['suppressed'] = [];
  const matched = retrieval.rules
    .filter(
      (s) => s.score >= agent.scenarioFilter.rule_match_threshold && inScope(byId.get(s.id)!, nav.scenario, nav.step),
    )
    .map((s) => byId.get(s.id)!)
    .filter((rule) => {
      const fires = session.ruleFires[rule.id];
      if (rule.max_fires_per_session > 0 && (fires?.count ?? 0) >= rule.max_fires_per_session) {
        suppressed.push({ id: rule.id, why: `fired ${fires!.count} time(s), the session maximum` });
        return false;
      }
      if (fires && rule.cooldown_turns > 0 && turn - fires.lastTurn <= rule.cooldown_turns) {
        suppressed.push({
          id: rule.id,
          why: `cooling down: fired at turn ${fires.lastTurn}, ${rule.cooldown_turns} turn(s) of cooldown`,
        });
        return false;
      }
      return true;
    })
    .sort((a, b) => b.priority - a.priority);
  const enforce = new Set(matched.filter((r) => r.is_hard_constraint).map((r) => r.id));
  if (alwaysEnforceGlobal)
    for (const r of agent.rules) if (r.enabled && r.scope === 'GLOBAL' && r.is_hard_constraint) enforce.add(r.id);
  return { matched: matched.map((r) => r.id), enforce: [...enforce], suppressed };
}

/**
 * The LLM rule filter's decision applied (stage 3): matched rules it says do not apply are dropped
 * from what generation follows and what runs tools. A rule it says nothing about stays (the filter
 * narrows, it never adds), and enforcement is unchanged: GLOBAL hard constraints are enforced
 * whatever the filter says.
 */
export function applyRuleFilter(
  selection: RuleSelection,
  applies: unknown,
): { selection: RuleSelection; dropped: string[] } {
  const said = applies !== null && typeof applies === 'object' ? (applies as Record<string, unknown>) : {};
  const dropped = selection.matched.filter((id) => said[id] === false);
  return { selection: { ...selection, matched: selection.matched.filter((id) => !dropped.includes(id)) }, dropped };
}

/** One verdict of enforcement: the guard's shape plus the variables lane 1 read. */
export interface EnforcementVerdict extends GuardVerdict {
  variables?: Record<string, unknown>;
}

/**
 * The variables lane 1 evaluates over (three-stage extraction): `profile` (from
 * the user's messages), `session` (tool outputs and earlier turns) and `response` (what the
 * response commits to: amounts, links, phones, its text).
 */
export function enforcementVariables(
  profile: Record<string, unknown>,
  sessionVars: Record<string, unknown>,
  response: string,
): Record<string, unknown> {
  return {
    profile,
    session: sessionVars,
    response: { text: response, text_lower: response.toLowerCase(), ...responseFacts(response) },
  };
}

/** One judge model's report (step 08; one per model of its `models`): verdicts by rule id, as the model wrote them. */
export interface JudgeReport {
  model: string;
  verdicts: unknown;
}

/** The check id of the grounding verdict (the judge lane checks it like a rule). */
export const GROUNDING = 'grounding';

export interface EnforcementInput {
  agent: Agent;
  enforce: readonly string[];
  message: string;
  response: string;
  variables: Record<string, unknown>;
  /** Lane 2: every judge's report (an empty list when the judge step gave none). */
  judges: readonly JudgeReport[];
  /** Query ↔ response similarity (the relevance check); null when the query has no content words to compare ("hi"): not judged. */
  relevance: number | null;
}

const isRefusal = (phrases: readonly string[], text: string) =>
  phrases.some((p) => text.toLowerCase().replace(/[’]/g, "'").includes(p));

const VerdictSchema = z.object({
  passed: z.boolean(),
  reason: z.string().optional(),
  score: z.number().min(0).max(1).optional(),
});

/** One judge on one check: passed, failed (with why), or no usable verdict (missing, or not `{ passed: boolean }`). */
type JudgeOutcome = { model: string; passed: boolean; reason?: string } | { model: string; missing: string };

function judgeOutcome(report: JudgeReport, check: string, threshold: number | undefined): JudgeOutcome {
  const raw =
    report.verdicts !== null && typeof report.verdicts === 'object'
      ? (report.verdicts as Record<string, unknown>)[check]
      : undefined;
  if (raw === undefined) return { model: report.model, missing: 'no verdict' };
  const parsed = VerdictSchema.safeParse(raw);
  if (!parsed.success) return { model: report.model, missing: 'an unparsable verdict' };
  const passed =
    threshold !== undefined && parsed.data.score !== undefined ? parsed.data.score >= threshold : parsed.data.passed;
  return { model: report.model, passed, ...(parsed.data.reason && { reason: parsed.data.reason }) };
}

/**
 * Lane 2 for one check: each judge's verdict, then the agent's `judge_combine` rule over them. A
 * judge with no usable verdict counts as `missing_verdict` says (by default a failure: the judge
 * fails closed); with no judge report at all, every judged check is missing.
 */
export function judgeVerdict(
  cfg: EnforcementConfig,
  judges: readonly JudgeReport[],
  check: string,
  action: string,
): EnforcementVerdict {
  const threshold = check === GROUNDING ? cfg.grounding_threshold : undefined;
  const outcomes = judges.length
    ? judges.map((j) => judgeOutcome(j, check, threshold))
    : [{ model: '(none)', missing: 'no judge report' } as JudgeOutcome];
  const passes = outcomes.map((o) => ('missing' in o ? cfg.missing_verdict === 'pass' : o.passed));
  const yes = passes.filter(Boolean).length;
  const passed =
    cfg.judge_combine === 'all'
      ? yes === passes.length
      : cfg.judge_combine === 'any'
        ? yes > 0
        : yes * 2 > passes.length;
  const missing = outcomes.flatMap((o) => ('missing' in o ? [`${o.model}: ${o.missing}`] : []));
  const reasons = outcomes.flatMap((o) => (!('missing' in o) && !o.passed ? [o.reason ?? action] : []));
  const judged =
    judges.length > 1
      ? {
          judges: outcomes.map((o) =>
            'missing' in o ? `${o.model}: ${o.missing}` : `${o.model}: ${o.passed ? 'passed' : 'failed'}`,
          ),
        }
      : {};
  const message = [
    ...reasons,
    ...missing.map((m) => `${m} from the judge (missing_verdict: ${cfg.missing_verdict})`),
  ].join('; ');
  return {
    check,
    lane: 'judge',
    passed,
    ...(judges.length > 1 && { variables: judged }),
    ...((!passed || missing.length) && { message: message || action }),
  };
}

/**
 * Enforcement (stage 6): lane 1 evaluates each enforced rule's `enforcement_expression`, lane 2
 * reads the judges' verdicts for enforced rules without one (and the grounding check); the
 * relevance check passes refusals when `relevance_refusal_bypass` is on. Every verdict is
 * returned, passed or not.
 */
export function enforce(input: EnforcementInput): EnforcementVerdict[] {
  const cfg = input.agent.enforcement;
  if (!cfg.enabled) return [];
  const verdicts: EnforcementVerdict[] = [];
  for (const id of input.enforce) {
    const rule = input.agent.rules.find((r) => r.id === id)!;
    if (rule.enforcement_expression) {
      if (!cfg.deterministic_enabled) continue;
      const expr = compileExpression(rule.enforcement_expression);
      // Macro variables (`l` in `links.all(l, ...)`) are not inputs: only paths into the given variables are recorded.
      const read = expr.variables.filter((p) => Object.hasOwn(input.variables, p.split('.')[0]!));
      const variables = Object.fromEntries(read.map((p) => [p, lookup(input.variables, p) ?? null]));
      const outcome = expr.test(input.variables);
      const passed = 'value' in outcome && outcome.value;
      verdicts.push({
        check: id,
        lane: 'deterministic',
        passed,
        variables,
        ...(passed
          ? {}
          : { message: 'value' in outcome ? rule.action_text : `${rule.action_text} (${outcome.problem})` }),
      });
    } else if (cfg.llm_judge_enabled) verdicts.push(judgeVerdict(cfg, input.judges, id, rule.action_text));
  }
  if (cfg.llm_judge_enabled && cfg.grounding_check_enabled)
    verdicts.push(judgeVerdict(cfg, input.judges, GROUNDING, GROUNDING_ACTION));
  if (cfg.relevance_check_enabled) {
    const refusal = cfg.relevance_refusal_bypass && isRefusal(cfg.refusal_phrases, input.response);
    const passed = refusal || input.relevance === null || input.relevance >= cfg.relevance_threshold;
    verdicts.push({
      check: 'relevance',
      lane: 'deterministic',
      passed,
      variables: { relevance: input.relevance, threshold: cfg.relevance_threshold, refusal },
      ...(passed ? {} : { message: "the response does not address the user's message" }),
    });
  }
  return verdicts;
}

/** What the judge checks for grounding (step 05 puts it in `guidance.judge`). */
export const GROUNDING_ACTION =
  'Every factual claim of the reply (order status, amounts, dates, items, policies) is backed by data.variables (tool results) or data.guidance (the scenario step and the rules); a refusal or a question needs no backing.';

export { stepKey };
