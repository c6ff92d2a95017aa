/**
 * The EventBridge Scheduler adapter as the timer functions build it from their environment. Apart
 * from services.ts so that only the functions that schedule bundle the Scheduler client.
 */
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { Env } from '../../../core/env.ts';
import type { ClientTracer } from '../../observability.ts';
import { eventBridgeScheduler, type TimerScheduler } from '../ports.ts';
import { need } from './services.ts';

/** The EventBridge Scheduler adapter from the environment the stack sets. */
export function schedulerFromEnv(
  env: Env,
  entityKey: string,
  tracer: ClientTracer,
  now?: () => number,
): TimerScheduler {
  const client = tracer.captureAWSv3Client(
    new SchedulerClient({ endpoint: env.AWS_ENDPOINT_URL_SCHEDULER, region: env.AWS_REGION }),
  );
  const target = {
    groupName: need(env, 'SCHEDULE_GROUP'),
    roleArn: need(env, 'SCHEDULER_ROLE_ARN'),
    busArn: need(env, 'LIFECYCLE_BUS_ARN'),
    deadLetterArn: need(env, 'TIMERS_DLQ_ARN'),
    entityKey,
  };
  return eventBridgeScheduler(client, target, now);
}
