/**
 * Listener on `lead.state_changed`: schedules the next follow-up, only when the lead can receive
 * one (`canReceiveFollowUp`), `FOLLOW_UP_DELAY_SECONDS` after the change, through the scheduler
 * port (the follow-up timer state machine `FOLLOW_UP_TIMER_ARN` on AWS).
 */
import { SFNClient } from '@aws-sdk/client-sfn';
import type { Env } from '../../lib/contracts.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import { observability } from '../../lib/observability.ts';
import { sfnFollowUpScheduler } from '../ports.ts';
import { followUpFor, parseStateChanged, type FollowUpRequest } from '../state-changes.ts';
import { lazy, need, type LifecycleServices } from './services.ts';

function delaySeconds(env: Env): number {
  const value = Number(need(env, 'FOLLOW_UP_DELAY_SECONDS'));
  if (!Number.isInteger(value) || value < 0) throw new InvalidInputError(`FOLLOW_UP_DELAY_SECONDS must be a whole number of seconds, got "${env.FOLLOW_UP_DELAY_SECONDS}"`);
  return value;
}

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const { tracer } = observability(env, 'lead-lifecycle');
  const delay = lazy(() => delaySeconds(env));
  const scheduler = lazy(
    () =>
      services.followUps ??
      sfnFollowUpScheduler(
        tracer.captureAWSv3Client(new SFNClient({ endpoint: env.AWS_ENDPOINT_URL_SFN, region: env.AWS_REGION })),
        need(env, 'FOLLOW_UP_TIMER_ARN'),
      ),
  );
  return async (event: unknown): Promise<{ scheduled: FollowUpRequest | null }> => {
    const request = followUpFor(parseStateChanged(event), delay());
    if (request) await scheduler().schedule(request);
    return { scheduled: request ?? null };
  };
}

export const handler = createHandler(process.env);
