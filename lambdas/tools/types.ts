import type { z } from 'zod';
import type { ToolCallRecord } from '../lib/contracts.ts';

/** Who is calling a tool: tools derive idempotency keys and the reply address from this, never from model output. */
export interface ToolContext {
  workflow: string;
  step: string;
  execution: { id: string; name: string };
  /** The verified ingress record (execution input `email`); `send_email` replies only to `email.from`. */
  email: InboundEmail;
  /**
   * Time left in the calling Lambda (`context.getRemainingTimeInMillis`). It bounds the lock a
   * side-effecting call holds, so a retry after a crashed attempt is not blocked for the whole
   * idempotency window. Without it the toolbox uses its `lockMs` option.
   */
  remainingTimeMs?: () => number;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** zod schema of the arguments; its JSON Schema is what the model sees. */
  input: z.ZodObject;
  /**
   * Set for a tool that changes the world: the toolbox runs it at most once per scope, and every
   * later call in the scope gets the first result back (with `replayed: true`) and does nothing.
   * `step`: once per (execution, step), so a retried step opens no second ticket. `execution`: once
   * per execution, whichever step calls it, so an email gets one reply even when the fallback runs
   * after a reply step. A call that failed is not remembered. Unset: no side effect, runs every time.
   */
  idempotency?: 'step' | 'execution';
  /** Arguments that carry no personal data, so the event log may keep them; every other argument is dropped there. */
  loggableArgs: readonly string[];
}

/** Executes known tools. The step runner enforces each step's allow-list before calling it. */
export interface Toolbox {
  spec(name: string): ToolSpec | undefined;
  /** Validates `args` against the tool's schema and runs it; refusals and failures come back as `error`, transient outages throw ToolUnavailableError. */
  execute(name: string, args: unknown, ctx: ToolContext): Promise<ToolCallRecord>;
}

/** The verified record the ingress puts in the execution input as `$.email`. The body is not in it (256 KB state limit): read it through the EmailStore. */
export interface InboundEmail {
  /** Key of the stored body (EmailsTable); equals the SES message id (locally: derived from the Message-ID header). */
  id: string;
  /** RFC 5322 Message-ID header. */
  messageId: string;
  /** Verified sender address (lower-cased), the only address `send_email` may write to. */
  from: string;
  fromName?: string;
  to: string[];
  subject: string;
  receivedAt: string;
  bodyChars: number;
}
