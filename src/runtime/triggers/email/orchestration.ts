/**
 * Dual mode: inbound mail goes to the step workflow or to the single-prompt agent
 * (the workflow as one LLM call, manifest `singlePrompt`), as the environment's SSM parameter says
 * (`steps` | `single-prompt`). An alarm on the step workflow's fallback-and-failure rate invokes the
 * rollback function, which flips the parameter to `single-prompt`; the ingress reads the parameter
 * with a short cache, so mail follows within its TTL. Putting `steps` back is a person's decision
 * (docs/guides/operating.md, "Rolling back to the single-prompt agent").
 */
import { GetParameterCommand, PutParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import * as z from 'zod';
import type { ExecutionStarter } from './starter.ts';

export const ORCHESTRATION_MODES = ['steps', 'single-prompt'] as const;
export type OrchestrationMode = (typeof ORCHESTRATION_MODES)[number];

/** Where the mode is read from and written to. */
export interface ModeStore {
  get(): Promise<OrchestrationMode>;
  set(mode: OrchestrationMode): Promise<void>;
}

/**
 * The mode in an SSM String parameter, read at most once per `ttlMs`. An unreadable or unknown
 * value is `steps` (the deployed default) and the reason is kept in `lastProblem`.
 */
export function ssmModeStore(
  client: SSMClient,
  name: string,
  ttlMs = 30_000,
  now: () => number = Date.now,
): ModeStore & { lastProblem?: string } {
  let cached: { mode: OrchestrationMode; at: number } | undefined;
  const store: ModeStore & { lastProblem?: string } = {
    async get() {
      if (cached && now() - cached.at < ttlMs) return cached.mode;
      let mode: OrchestrationMode = 'steps';
      try {
        const out = await client.send(new GetParameterCommand({ Name: name }));
        const parsed = z.enum(ORCHESTRATION_MODES).safeParse(out.Parameter?.Value);
        if (parsed.success) mode = parsed.data;
        else
          store.lastProblem = `parameter ${name} holds ${JSON.stringify(out.Parameter?.Value)}, not steps or single-prompt: using steps`;
      } catch (e) {
        store.lastProblem = `parameter ${name} could not be read (${(e as Error).name}): using steps`;
      }
      cached = { mode, at: now() };
      return mode;
    },
    async set(mode) {
      await client.send(new PutParameterCommand({ Name: name, Value: mode, Type: 'String', Overwrite: true }));
      cached = undefined;
    },
  };
  return store;
}

/** An ingress starter that starts each accepted mail in the state machine the mode selects. */
export function routedStarter(
  mode: () => Promise<OrchestrationMode>,
  starters: Record<OrchestrationMode, ExecutionStarter>,
  onRoute?: (mode: OrchestrationMode) => void,
): ExecutionStarter {
  return {
    definitive: starters.steps.definitive && starters['single-prompt'].definitive,
    async start(name, input) {
      const chosen = await mode();
      onRoute?.(chosen);
      return starters[chosen].start(name, input);
    },
  };
}

/** The CloudWatch alarm event a Lambda alarm action receives (the fields the rollback reads). */
const AlarmEvent = z.object({
  alarmData: z.object({ alarmName: z.string(), state: z.object({ value: z.string(), reason: z.string().optional() }) }),
});

/**
 * The rollback: on the ALARM state of the alarm on the step workflow's fallback-and-failure rate
 * (over `orchestration.rollback.failureRatePercent`, 5% by default), put the mode to
 * `single-prompt`. Any other state changes nothing (recovery back to `steps` is a person's call,
 * after fixing the cause). Returns what it did, for the log.
 */
export async function rollback(
  event: unknown,
  store: ModeStore,
): Promise<{ flipped: boolean; from?: OrchestrationMode; why: string }> {
  const parsed = AlarmEvent.safeParse(event);
  if (!parsed.success) return { flipped: false, why: 'not a CloudWatch alarm state change: ignored' };
  const { alarmName, state } = parsed.data.alarmData;
  if (state.value !== 'ALARM') return { flipped: false, why: `${alarmName} is ${state.value}: nothing to do` };
  const from = await store.get();
  if (from === 'single-prompt')
    return { flipped: false, from, why: `${alarmName}: already on the single-prompt agent` };
  await store.set('single-prompt');
  return {
    flipped: true,
    from,
    why: `${alarmName}: ${state.reason ?? 'alarm'}; inbound mail now goes to the single-prompt agent`,
  };
}
