/**
 * Listener on `<entity>.state_changed` (the `notify` feature; its rule passes only changes to a
 * notify state): tells the client's team through the notifier port (SES from `MAIL_FROM` to
 * `NOTIFY_TO` on AWS).
 */
import { SESv2Client } from '@aws-sdk/client-sesv2';
import type { Env } from '../../../core/env.ts';
import { lazy } from '../../../core/lazy.ts';
import { observability } from '../../observability.ts';
import { sesNotifier } from '../ports.ts';
import { type EntityNotification, notificationFor, parseStateChanged } from '../state-changes.ts';
import { type LifecycleServices, lifecycleFromEnv, need } from './services.ts';

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const { tracer } = observability(env, env.LIFECYCLE ?? 'lifecycle');
  const def = lazy(() => lifecycleFromEnv(env));
  const notifier = lazy(
    () =>
      services.notifier ??
      sesNotifier(
        tracer.captureAWSv3Client(new SESv2Client({ endpoint: env.AWS_ENDPOINT_URL_SESV2, region: env.AWS_REGION })),
        need(env, 'MAIL_FROM'),
        need(env, 'NOTIFY_TO'),
      ),
  );
  return async (event: unknown): Promise<{ notified: EntityNotification | null }> => {
    const notification = notificationFor(def(), parseStateChanged(event));
    if (notification) await notifier().notify(notification);
    return { notified: notification ?? null };
  };
}

export const handler = createHandler(process.env);
