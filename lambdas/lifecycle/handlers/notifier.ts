/**
 * Listener on `lead.state_changed` (its rule passes only changes to a notify state): tells the
 * client's team through the notifier port (SES from `MAIL_FROM` to `NOTIFY_TO` on AWS).
 */
import { SESv2Client } from '@aws-sdk/client-sesv2';
import type { Env } from '../../lib/contracts.ts';
import { observability } from '../../lib/observability.ts';
import { sesNotifier } from '../ports.ts';
import { notificationFor, parseStateChanged, type LeadNotification } from '../state-changes.ts';
import { lazy, need, type LifecycleServices } from './services.ts';

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const { tracer } = observability(env, 'lead-lifecycle');
  const notifier = lazy(
    () =>
      services.notifier ??
      sesNotifier(
        tracer.captureAWSv3Client(new SESv2Client({ endpoint: env.AWS_ENDPOINT_URL_SESV2, region: env.AWS_REGION })),
        need(env, 'MAIL_FROM'),
        need(env, 'NOTIFY_TO'),
      ),
  );
  return async (event: unknown): Promise<{ notified: LeadNotification | null }> => {
    const notification = notificationFor(parseStateChanged(event));
    if (notification) await notifier().notify(notification);
    return { notified: notification ?? null };
  };
}

export const handler = createHandler(process.env);
