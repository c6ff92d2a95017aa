/**
 * The option of an `event` step (`kind: event`): wait until an outside event that carries the
 * execution's correlation key arrives, or until a deadline. Its checks are in
 * ./constructs/event.ts, its states in src/cdk/constructs/compile/event.ts, the resumer that
 * completes the wait in src/runtime/triggers/event-wait/.
 */
import * as z from 'zod';
import { MAX_WAIT_SECONDS } from './construct-options.ts';
import { StatePath } from './state-path.ts';
import { StepName } from './step-name.ts';

/** A dotted path into an event's `detail` (`order.id`). */
export const DetailPath = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$/, 'a dotted path into the detail (order.id)');

export const EventOptionSchema = z
  .object({
    source: z
      .string()
      .regex(/^[A-Za-z0-9._\-/]{1,256}$/)
      .describe('The `source` of the awaited event (`shop.payments`).'),
    detailType: z.string().min(1).max(128).describe('The `detail-type` of the awaited event (`PaymentReceived`).'),
    bus: z
      .string()
      .regex(/^[A-Za-z0-9._\-/]{1,256}$/)
      .default('default')
      .describe("The bus the event arrives on; `default` is the account's default bus."),
    key: StatePath.describe(
      'The correlation key: the state value (`data.orderId`) an event must carry to resume this execution.',
    ),
    match: DetailPath.describe('Where the event carries the key in its `detail` (`orderId`, `order.id`).'),
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_WAIT_SECONDS)
      .describe('The deadline: how long the step waits (`259200`: three days), ASL `TimeoutSeconds`.'),
    onTimeout: StepName.describe(
      'The step taken when no matching event came in time (`States.Timeout` at `$.error`); required.',
    ),
    output: z
      .string()
      .regex(/^[a-zA-Z][a-zA-Z0-9_]*$/, 'camelCase or snake_case')
      .default('event')
      .describe("The output that holds the event's `detail` for later steps (`data.<output>`)."),
  })
  .strict();
export type EventOption = z.infer<typeof EventOptionSchema>;
