/**
 * Local runs export each execution's trace to an OpenTelemetry collector over OTLP/HTTP (JSON):
 * `--otlp <url>`, or the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`
 * variables. The trace is built from the recorded history (src/runtime/tracing/otlp.ts), so the
 * local runtime needs no OpenTelemetry SDK.
 */
import { StepwiseError } from '../../core/errors.ts';
import { STEPWISE_VERSION } from '../../core/paths.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { StepOutput } from '../../runtime/contracts/step.ts';
import { executionTrace, type OtlpTraceRequest, type TracedExecution } from '../../runtime/tracing/otlp.ts';
import { type ExecutionRecord, stepTrail } from './history.ts';

/** The collector did not take a trace. */
export class TraceExportError extends StepwiseError {}

const TRACES_PATH = '/v1/traces';

/**
 * Where traces go: the flag's URL, else the signal's variable as it is, else the base variable
 * with `/v1/traces`; `undefined` when none is set. A URL that names no path gets `/v1/traces`.
 */
export function otlpTracesUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT && !flag) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = flag ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!base) return undefined;
  const url = new URL(base);
  if (!url.pathname.endsWith(TRACES_PATH)) url.pathname = `${url.pathname.replace(/\/$/, '')}${TRACES_PATH}`;
  return url.toString();
}

const isStepOutput = (output: unknown): output is StepOutput =>
  typeof output === 'object' && output !== null && 'toolCalls' in output;

/** An execution record (local or imported) as the steps of its workflow's trace. */
export function tracedExecution(
  record: ExecutionRecord,
  def: Pick<WorkflowDefinition, 'steps' | 'manifest'>,
): TracedExecution {
  const steps = new Set(def.steps.map((s) => s.name));
  return {
    arn: record.executionArn,
    name: record.name,
    workflow: def.manifest.name,
    status: record.status,
    start: record.startDate,
    end: record.stopDate,
    steps: stepTrail(record.events)
      .filter((s) => steps.has(s.name))
      .map((s) => ({
        name: s.name,
        start: s.enteredAt,
        end: s.exitedAt,
        ...(isStepOutput(s.output) && { output: s.output }),
        ...(s.error && { error: s.error.error }),
        retries: s.retries,
      })),
  };
}

/** POST one trace; a collector that refuses it or cannot be reached is a TraceExportError. */
export async function exportTrace(url: string, trace: OtlpTraceRequest, timeoutMs = 10_000): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(trace),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    throw new TraceExportError(`OTLP export to ${url} failed: ${(e as Error).message}`, { cause: e });
  }
  if (!response.ok)
    throw new TraceExportError(
      `OTLP export to ${url}: the collector answered ${response.status} ${response.statusText}`,
    );
}

/** Export an execution of `def` to `url`, as the service `stepwise-<workflow>`. */
export function exportExecution(
  url: string,
  record: ExecutionRecord,
  def: Pick<WorkflowDefinition, 'steps' | 'manifest'>,
): Promise<void> {
  return exportTrace(
    url,
    executionTrace(tracedExecution(record, def), `stepwise-${def.manifest.name}`, STEPWISE_VERSION),
  );
}
