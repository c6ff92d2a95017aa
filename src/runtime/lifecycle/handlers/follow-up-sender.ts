/**
 * The follow-up sender (the `followUps` feature), on `follow_up.due` (put on the bus by the
 * entity's follow-up schedule): reads the entity, and with `decideFollowUp` drops a stale timer
 * (the entity's version moved on), skips an entity that cannot receive follow-ups
 * (`canReceiveFollowUp`), restarts the chain after a reply, or sends follow-up n through the
 * agent's channel port, logs it as the feature's `sent` event and sets the next step; after the
 * last step it applies the feature's `exhausted` event (guarded by the version).
 * Every step is idempotent, so the at-least-once delivery of the schedule is safe.
 */

import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { InvalidInputError } from '../../../core/errors.ts';
import { lazy } from '../../../core/lazy.ts';
import { LIFECYCLE_SOURCE, SCHEDULER_SOURCE } from '../../../definitions/lifecycle/schema.ts';
import { observability } from '../../observability.ts';
import { EventBridgeEnvelopeSchema, FOLLOW_UP_DUE, toPutEventsEntry } from '../envelope.ts';
import { httpFollowUpChannel } from '../ports.ts';
import { lifecycleStoreFromEnv } from '../store.ts';
import { decideFollowUp, type FollowUpDecision, FollowUpDueSchema } from '../timers.ts';
import { schedulerFromEnv } from './scheduler-from-env.ts';
import { type LifecycleServices, lifecycleFromEnv, need, parseInput, timersFromEnv } from './services.ts';

const FollowUpDueEnvelope = EventBridgeEnvelopeSchema.extend({
  source: z.literal(LIFECYCLE_SOURCE),
  'detail-type': z.literal(FOLLOW_UP_DUE),
  detail: FollowUpDueSchema,
});

/** PutEvents through the SDK; a failed entry throws, so the delivery is retried. */
function sdkPutEvents(client: EventBridgeClient) {
  return async (Entries: PutEventsRequestEntry[]) => {
    const result = await client.send(new PutEventsCommand({ Entries }));
    if (result.FailedEntryCount)
      throw new InvalidInputError(
        `PutEvents refused: ${result.Entries?.find((e) => e.ErrorCode)?.ErrorMessage ?? 'unknown error'}`,
      );
  };
}

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const { tracer, metrics, logger, instrument } = observability(env, env.LIFECYCLE ?? 'lifecycle');
  const def = lazy(() => lifecycleFromEnv(env));
  const timers = lazy(() => timersFromEnv(env));
  const store = lazy(() => services.store ?? lifecycleStoreFromEnv(env, tracer));
  const scheduler = lazy(() => services.timers ?? schedulerFromEnv(env, def().entity.key, tracer, services.now));
  const channel = lazy(
    () => services.followUpChannel ?? httpFollowUpChannel(need(env, 'FOLLOW_UP_WEBHOOK_URL'), def().entity.key),
  );
  const busName = lazy(() => need(env, 'LIFECYCLE_BUS_ARN'));
  const putEvents = lazy(
    () =>
      services.putEvents ??
      sdkPutEvents(
        tracer.captureAWSv3Client(
          new EventBridgeClient({ endpoint: env.AWS_ENDPOINT_URL_EVENTBRIDGE, region: env.AWS_REGION }),
        ),
      ),
  );
  return instrument(async (input: unknown): Promise<FollowUpDecision> => {
    const due = parseInput(FollowUpDueEnvelope, input, `${FOLLOW_UP_DUE} event`).detail;
    const [entity, log] = await Promise.all([store().getEntity(due.entityId), store().listEvents(due.entityId)]);
    const reply = def().features.followUps?.reply;
    const lastReplyAt = log.filter((e) => e.type === reply).at(-1)?.time;
    const decision = decideFollowUp(def(), timers(), due, entity, lastReplyAt);
    metrics.addMetric(`FollowUp_${decision.outcome}`, MetricUnit.Count, 1);
    switch (decision.outcome) {
      case 'stale':
      case 'not-eligible':
        logger.info(`follow-up not sent: ${decision.outcome}`, {
          entityId: due.entityId,
          timer: due.timer,
          reason: decision.reason,
        });
        break;
      case 'restarted':
        if (decision.next) await scheduler().set(decision.next);
        break;
      case 'send':
        await channel().sendFollowUp({
          entityId: due.entityId,
          followUp: decision.followUp,
          version: due.timer.version,
          key: decision.event.id,
        });
        await putEvents()([toPutEventsEntry(def(), decision.event, busName(), SCHEDULER_SOURCE)]);
        if (decision.next) await scheduler().set(decision.next);
        break;
      case 'exhausted':
        await putEvents()([toPutEventsEntry(def(), decision.event, busName(), SCHEDULER_SOURCE)]);
        break;
    }
    return decision;
  });
}

export const handler = createHandler(process.env);
