/**
 * What the lifecycle's Lambda handlers share: the adapters a local runtime or a test may pass to
 * `createHandler(env, services)` instead of the AWS ones built from the environment, and the
 * parsing of their input and environment.
 */

import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { InvalidInputError } from '../../../core/errors.ts';
import { STATEMACHINES_DIR } from '../../../core/paths.ts';
import type { AgentConfig } from '../../../definitions/lifecycle/agent-config.ts';
import { loadLifecycle, parseAgentConfig } from '../../../definitions/lifecycle/loader.ts';
import type { LifecycleDefinition } from '../../../definitions/lifecycle/schema.ts';
import { NO_TIMERS, type TimersConfig } from '../../../definitions/lifecycle/timers-config.ts';
import type { CrmPort, FollowUpChannel, NotifierPort, TimerScheduler } from '../ports.ts';
import type { LifecycleStore } from '../store.ts';

/** Local or test adapters; anything missing is built from the environment on first use. */
export interface LifecycleServices {
  store?: LifecycleStore;
  crm?: CrmPort;
  notifier?: NotifierPort;
  /**
   * Where an entity's timers are scheduled. @default EventBridge Scheduler (`SCHEDULE_GROUP`, `SCHEDULER_ROLE_ARN`,
   * `LIFECYCLE_BUS_ARN`, `TIMERS_DLQ_ARN`)
   */
  timers?: TimerScheduler;
  /** The agent's channel follow-ups go out through. @default the `FOLLOW_UP_WEBHOOK_URL` webhook */
  followUpChannel?: FollowUpChannel;
  /**
   * Puts lifecycle events on the lifecycle's bus (the follow-up sender logs what it did). @default EventBridge
   * PutEvents to `LIFECYCLE_BUS_ARN`
   */
  putEvents?: (entries: PutEventsRequestEntry[]) => Promise<void>;
  /** The clock (the local scheduler's, in replays). @default Date.now */
  now?: () => number;
  /** Waits before a re-read after a version conflict. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
  /** The backoff's jitter source. @default Math.random */
  random?: () => number;
}

/** The value of a required environment variable. @throws InvalidInputError naming it when unset. */
export function need(env: Env, name: string): string {
  const value = env[name];
  if (!value) throw new InvalidInputError(`this function's environment has no ${name}`);
  return value;
}

/** `input` parsed with `schema`. @throws InvalidInputError naming `what` and the first bad field. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, what: string): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new InvalidInputError(`${what}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** The lifecycle named by `LIFECYCLE` under `STATEMACHINES_DIR`. @throws InvalidInputError when `LIFECYCLE` is not set. */
export function lifecycleFromEnv(env: Env): LifecycleDefinition {
  return loadLifecycle(need(env, 'LIFECYCLE'), env.STATEMACHINES_DIR ?? STATEMACHINES_DIR);
}

/** The agent config in `AGENT_CONFIG` (JSON, `{ goal, stopFollowUpsOn }`). @throws DefinitionError / InvalidInputError. */
export function agentConfigFromEnv(env: Env): AgentConfig {
  const text = need(env, 'AGENT_CONFIG');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new InvalidInputError(`AGENT_CONFIG is not JSON: ${(e as Error).message}`);
  }
  return parseAgentConfig(raw, 'AGENT_CONFIG');
}

/** The agent's timers in `AGENT_CONFIG` (none when it declares none). */
export function timersFromEnv(env: Env): TimersConfig {
  return agentConfigFromEnv(env).timers ?? NO_TIMERS;
}
