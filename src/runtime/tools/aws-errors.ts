import { ToolUnavailableError } from '../../core/errors.ts';

// Error names AWS SDK v3 uses for throttling and server-side trouble across the services the tools call.
const TRANSIENT_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'InternalServerError',
  'InternalFailure',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);

/** Throttling, a 5xx or a network failure: worth retrying later (the ASL Retry does). */
export function isTransient(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const { $metadata, $retryable, code } = e as Error & {
    $metadata?: { httpStatusCode?: number };
    $retryable?: unknown;
    code?: string;
  };
  const status = $metadata?.httpStatusCode ?? 0;
  return (
    status === 429 ||
    status >= 500 ||
    Boolean($retryable) ||
    TRANSIENT_NAMES.has(e.name) ||
    NETWORK_CODES.has(code ?? '')
  );
}

/** The error to throw for a tool failure, or undefined when the failure is permanent (recorded, not thrown). */
export function asUnavailable(tool: string, e: unknown): ToolUnavailableError | undefined {
  if (e instanceof ToolUnavailableError) return e;
  // Powertools wraps store failures; the cause says whether they are transient.
  const cause = e instanceof Error && e.name === 'IdempotencyPersistenceLayerError' ? e.cause : e;
  if (e instanceof Error && e.name === 'IdempotencyAlreadyInProgressError')
    return new ToolUnavailableError(`${tool}: an earlier call (a crashed or parallel attempt) is still running it`, {
      cause: e,
    });
  if (isTransient(cause))
    return new ToolUnavailableError(`${tool}: ${(cause as Error).name}: ${(cause as Error).message}`, { cause: e });
  return undefined;
}
