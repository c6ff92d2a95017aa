/**
 * Typed errors. Each class sets `name`, which Lambda reports as `errorType` and Step Functions
 * matches in Retry/Catch `ErrorEquals`. Keep the names stable: the compiled ASL refers to them.
 */
export class StepwiseError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The model provider throttled the call (Bedrock `ThrottlingException`, HTTP 429). Transient. */
export class ModelThrottledError extends StepwiseError {}
/** The model call timed out or the provider returned a 5xx. Transient. */
export class ModelTimeoutError extends StepwiseError {}
/** A tool's backing service was unavailable (throttled, 5xx, network). Transient. */
export class ToolUnavailableError extends StepwiseError {}

/** The model's output could not be turned into a valid step result. Permanent: goes to the fallback. */
export class InvalidModelOutputError extends StepwiseError {}
/** A step asked for a tool outside its allow-list. Permanent: recorded, never executed. */
export class ToolNotAllowedError extends StepwiseError {}
/** A tool was called with arguments that fail its schema. Permanent. */
export class ToolInputError extends StepwiseError {}
/** Input to a handler failed validation. Permanent. */
export class InvalidInputError extends StepwiseError {}
/** A workflow or lifecycle definition on disk is invalid. Names the file and the field. */
export class DefinitionError extends StepwiseError {
  constructor(
    readonly file: string,
    readonly field: string,
    detail: string,
  ) {
    super(`${file}: ${field}: ${detail}`);
  }
}
/** A step's output would not fit the state limit even with its large values offloaded, or an offloaded value is gone. Permanent: goes to the fallback. */
export class StateTooLargeError extends StepwiseError {}
/** Optimistic-concurrency conflict on a versioned record. Transient: re-read and retry. */
export class VersionConflictError extends StepwiseError {}
/**
 * A lifecycle event too large to be applied within Step Functions' 256 KiB state (see
 * `MAX_EVENT_BYTES`). Permanent: the event is refused into the incoming dead-letter queue.
 */
export class EventTooLargeError extends StepwiseError {}

/** Error names the compiled ASL retries with backoff and jitter. */
export const TRANSIENT_ERRORS = [ModelThrottledError.name, ModelTimeoutError.name, ToolUnavailableError.name] as const;

/** Java (>= 17) is missing or too old for DynamoDB Local. The message says how to install it. */
export class JavaNotFoundError extends StepwiseError {}
/** A local stand-in for an AWS service (DynamoDB Local, the local EventBridge bus) could not be fetched, started or configured. */
export class LocalServiceError extends StepwiseError {}
/** An EventBridge event pattern is malformed. The message names the path inside the pattern. */
export class InvalidEventPatternError extends StepwiseError {}

/** A deployment environment name is unknown or its config is invalid (stepwise.config.ts). Raised at synth time. */
export class ConfigError extends StepwiseError {}

/** The model provider rejected the request (validation, access denied, unknown model). Permanent: retrying sends the same request. */
export class ModelRequestError extends StepwiseError {}
/** A step could not do its job (e.g. the fallback's reply could not be sent). Permanent: the message says what failed. */
export class StepFailedError extends StepwiseError {}

/**
 * The lifecycle state machine routed an event to a transition Task that the lifecycle definition
 * does not resolve for the entity's event: the deployed ASL and the function's statechart disagree
 * (deploy them together). Permanent.
 */
export class RouteMismatchError extends StepwiseError {}
/** The CRM did not accept a state update (network error, 429 or 5xx). Transient: the delivery is retried. */
export class CrmSyncError extends StepwiseError {}
/** A local run needs AWS credentials (`--model bedrock`) and the default credential chain found none. The message says how to provide them. */
export class MissingCredentialsError extends StepwiseError {}
/** A paused local execution is already being resumed (its claim is held): a task token is used once. */
export class ExecutionClaimedError extends StepwiseError {}

/**
 * The message inside a Step Functions error Cause: Lambda errors carry `{"errorType","errorMessage",...}`,
 * `States.*` errors plain text (returned as is).
 */
export function causeMessage(cause: string): string;
export function causeMessage(cause: string | undefined): string | undefined;
export function causeMessage(cause: string | undefined): string | undefined {
  if (cause === undefined) return undefined;
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // Not JSON: already a message.
  }
  return cause;
}
/** More items of a `map` step failed than it tolerates, or it got more items than its `maxItems`. Goes to the map's failure route. */
export class ItemsFailedError extends StepwiseError {}
/** A branch of a `parallel` step failed; the message names the branch. Goes to the parallel's failure route. */
export class BranchFailedError extends StepwiseError {}
