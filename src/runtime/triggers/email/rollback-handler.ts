import { SSMClient } from '@aws-sdk/client-ssm';
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { InvalidInputError } from '../../../core/errors.ts';
import { observability } from '../../observability.ts';
import { type ModeStore, rollback, ssmModeStore } from './orchestration.ts';

const RollbackEnv = z.object({ ORCHESTRATION_PARAMETER: z.string().min(1), AWS_REGION: z.string().optional() });

/** The rollback alarm's action: flips the orchestration parameter to the single-prompt agent (see orchestration.ts). */
export function createHandler(env: Env, services: { store?: ModeStore } = {}) {
  const { logger, tracer } = observability(env, 'stepwise-rollback');
  let store = services.store;
  return async (event: unknown) => {
    if (!store) {
      const cfg = RollbackEnv.safeParse(env);
      if (!cfg.success)
        throw new InvalidInputError(
          `rollback environment: ${cfg.error.issues[0]!.path.join('.')}: ${cfg.error.issues[0]!.message}`,
        );
      store = ssmModeStore(
        tracer.captureAWSv3Client(new SSMClient({ region: cfg.data.AWS_REGION })),
        cfg.data.ORCHESTRATION_PARAMETER,
        0,
      );
    }
    const done = await rollback(event, store);
    (done.flipped ? logger.warn : logger.info).call(logger, `Orchestration rollback: ${done.why}`, { ...done });
    return done;
  };
}

export const handler = createHandler(process.env);
