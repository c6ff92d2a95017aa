/**
 * The resumer: the target of an event step's EventBridge rule. Checks the event, then resumes the
 * execution waiting on the key it carries (see ./waits.ts); an event that resumes nothing is
 * recorded in the token table with its reason and logged, never dropped.
 */
import { SendTaskSuccessCommand, SFNClient } from '@aws-sdk/client-sfn';
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { InvalidInputError } from '../../../core/errors.ts';
import { observability } from '../../observability.ts';
import { envWaitTable } from './table.ts';
import {
  EventEnvelopeSchema,
  type EventOutcome,
  resumeWaiting,
  type SendSuccess,
  WaitDeclarationSchema,
  type WaitTable,
} from './waits.ts';

const ResumerEnv = z.object({
  WAITS_TABLE: z.string().min(1),
  EVENT_WAITS: z.string().transform((text, ctx) => {
    const parsed = z.array(WaitDeclarationSchema).safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: 'custom', message: `EVENT_WAITS: ${parsed.error.issues[0]!.message}` });
    return z.NEVER;
  }),
  AWS_REGION: z.string().optional(),
  AWS_ENDPOINT_URL_DYNAMODB: z.string().optional(),
  AWS_ENDPOINT_URL_SFN: z.string().optional(),
});

/** Adapters a test may supply instead of the AWS clients built from env. */
export interface ResumerServices {
  table?: WaitTable;
  sendSuccess?: SendSuccess;
  clock?: () => Date;
}

/** `SendTaskSuccess`; a token whose task timed out or whose execution ended is gone, not an error. */
export function sfnSendSuccess(sfn: SFNClient): SendSuccess {
  return async (taskToken, output) => {
    try {
      await sfn.send(new SendTaskSuccessCommand({ taskToken, output }));
      return true;
    } catch (e) {
      if (['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken'].includes((e as Error).name)) return false;
      throw e;
    }
  };
}

export function createHandler(env: Env, services: ResumerServices = {}) {
  const { logger } = observability(env, 'stepwise-event-resumer');
  const cfg = ResumerEnv.parse(env);
  const table = services.table ?? envWaitTable(cfg);
  const sendSuccess =
    services.sendSuccess ??
    sfnSendSuccess(new SFNClient({ endpoint: cfg.AWS_ENDPOINT_URL_SFN, region: cfg.AWS_REGION }));
  return async (event: unknown): Promise<EventOutcome[]> => {
    const parsed = EventEnvelopeSchema.safeParse(event);
    if (!parsed.success) throw new InvalidInputError(`not an EventBridge event: ${parsed.error.issues[0]!.message}`);
    const now = services.clock?.() ?? new Date();
    const outcomes = await resumeWaiting(parsed.data, cfg.EVENT_WAITS, { table, sendSuccess, now });
    // The key and the detail may be personal data: the reason and the ids say what happened.
    for (const o of outcomes)
      logger.info('outside event', {
        eventId: o.eventId,
        step: o.step,
        outcome: o.outcome,
        ...(o.outcome === 'unmatched' && { reason: o.reason }),
        execution: o.execution,
      });
    return outcomes;
  };
}

let ready: ReturnType<typeof createHandler> | undefined;
/** Built on the first invocation, so importing this module never fails. */
export const handler = (event: unknown) => {
  ready ??= createHandler(process.env);
  return ready(event);
};
