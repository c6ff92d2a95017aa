/**
 * Listener on `<entity>.state_changed` (the `crmSync` feature): writes the entity's state back to
 * the CRM through the CRM port (`CRM_WEBHOOK_URL` on AWS).
 */
import type { Env } from '../../../core/env.ts';
import { lazy } from '../../../core/lazy.ts';
import { observability } from '../../observability.ts';
import { httpCrm } from '../ports.ts';
import { type CrmEntityState, crmUpdateOf, parseStateChanged } from '../state-changes.ts';
import { type LifecycleServices, lifecycleFromEnv, need } from './services.ts';

export function createHandler(env: Env, services: LifecycleServices = {}) {
  // Creating the tracer is enough: on Lambda it records every fetch (the webhook call) as an X-Ray subsegment.
  observability(env, env.LIFECYCLE ?? 'lifecycle');
  const crm = lazy(() => services.crm ?? httpCrm(need(env, 'CRM_WEBHOOK_URL'), lifecycleFromEnv(env).entity.key));
  return async (event: unknown): Promise<CrmEntityState> => {
    const update = crmUpdateOf(parseStateChanged(event));
    await crm().syncEntityState(update);
    return update;
  };
}

export const handler = createHandler(process.env);
