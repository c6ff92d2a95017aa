/**
 * Listener on `lead.state_changed`: writes the lead's state back to the CRM through the CRM port
 * (`CRM_WEBHOOK_URL` on AWS).
 */
import type { Env } from '../../lib/contracts.ts';
import { observability } from '../../lib/observability.ts';
import { httpCrm } from '../ports.ts';
import { crmUpdateOf, parseStateChanged, type CrmLeadState } from '../state-changes.ts';
import { lazy, need, type LifecycleServices } from './services.ts';

export function createHandler(env: Env, services: LifecycleServices = {}) {
  // Creating the tracer is enough: on Lambda it records every fetch (the webhook call) as an X-Ray subsegment.
  observability(env, 'lead-lifecycle');
  const crm = lazy(() => services.crm ?? httpCrm(need(env, 'CRM_WEBHOOK_URL')));
  return async (event: unknown): Promise<CrmLeadState> => {
    const update = crmUpdateOf(parseStateChanged(event));
    await crm().syncLeadState(update);
    return update;
  };
}

export const handler = createHandler(process.env);
