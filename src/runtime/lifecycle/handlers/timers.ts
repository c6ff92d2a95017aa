/**
 * Listener on `<entity>.state_changed` (the `followUps` and `renewals` features, delayed transitions): sets and cancels
 * the entity's timers (timers.ts) through the scheduler port (EventBridge Scheduler on AWS).
 * Idempotent: names are per (kind, entity) and a timer never replaces a newer one, so redelivered
 * or reordered changes leave the newest timers.
 */
import type { Env } from '../../../core/env.ts';
import { lazy } from '../../../core/lazy.ts';
import { observability } from '../../observability.ts';
import { parseStateChanged } from '../state-changes.ts';
import { restampTimer, type TimerPlan, timersForChange } from '../timers.ts';
import { schedulerFromEnv } from './scheduler-from-env.ts';
import { type LifecycleServices, lifecycleFromEnv, timersFromEnv } from './services.ts';

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const { tracer, logger } = observability(env, env.LIFECYCLE ?? 'lifecycle');
  const def = lazy(() => lifecycleFromEnv(env));
  const timers = lazy(() => timersFromEnv(env));
  const scheduler = lazy(() => services.timers ?? schedulerFromEnv(env, def().entity.key, tracer, services.now));
  return async (event: unknown): Promise<TimerPlan & { kept: string[] }> => {
    const change = parseStateChanged(event);
    const plan = timersForChange(def(), timers(), change);
    const kept: string[] = [];
    for (const name of plan.cancel) await scheduler().cancel(name);
    for (const request of plan.set) if ((await scheduler().set(request)) === 'kept') kept.push(request.name);
    for (const { name, version } of plan.restamp) {
      const pending = await scheduler().get(name);
      if (pending && pending.stamp.version < version) await scheduler().set(restampTimer(pending, version));
    }
    if (kept.length) logger.info('kept newer timers', { changeId: change.changeId, kept });
    if (plan.unscheduled.length)
      logger.warn('delayed transitions not scheduled', { changeId: change.changeId, unscheduled: plan.unscheduled });
    return { ...plan, kept };
  };
}

export const handler = createHandler(process.env);
