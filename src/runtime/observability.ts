/**
 * The Powertools wiring every Lambda handler shares: its Logger, its tracer (X-Ray subsegments for
 * the AWS SDK clients it creates, where the environment asks for them) and its Metrics (CloudWatch
 * EMF). Configured from the `env` the handler was created with — on Lambda that is `process.env`;
 * in the local runtime it is the template's environment — so a handler behaves the same wherever
 * it runs.
 *
 * X-Ray and EMF are for Lambda only: locally there is no X-Ray daemon, and EMF lines on stdout
 * would only corrupt a CLI's output. Both are therefore off unless `AWS_EXECUTION_ENV` (set by the
 * Lambda runtime, not by the local runtime) says the code runs on Lambda.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Env } from '../core/env.ts';

// Powertools Tracer brings the X-Ray SDK: about 127 KB of every bundle and 30 ms of every cold
// start, and its async hooks tax every promise of the process. A Lambda bundle holds it only when
// its environment sets `sdkTraces` (StepwiseFunction defines STEPWISE_SDK_TRACES; esbuild drops the
// import otherwise). Run from source, it is loaded only on Lambda: the local runtime never traces.
const powertoolsTracer = (
  process.env.STEPWISE_LAMBDA_BUNDLE === undefined
    ? process.env.AWS_EXECUTION_ENV !== undefined
    : process.env.STEPWISE_SDK_TRACES === 'on'
)
  ? await import('@aws-lambda-powertools/tracer')
  : undefined;

/** The CloudWatch namespace of every metric when `POWERTOOLS_METRICS_NAMESPACE` is not set. */
export const DEFAULT_METRICS_NAMESPACE = 'Stepwise';

/**
 * What a client factory needs from the tracer: `captureAWSv3Client` makes each call of the client an X-Ray subsegment.
 */
export interface ClientTracer {
  captureAWSv3Client<T>(client: T): T;
}

/** The handler's tracer; without the X-Ray SDK in the bundle, one that leaves clients as they are. */
export interface HandlerTracer extends ClientTracer {
  isTracingEnabled(): boolean;
}

const NO_TRACER: HandlerTracer = { captureAWSv3Client: (client) => client, isTracingEnabled: () => false };

export interface Observability {
  readonly logger: Logger;
  /**
   * Wrap every AWS SDK client the handler creates: `tracer.captureAWSv3Client(new S3Client(...))`. A no-op off Lambda
   * and without `sdkTraces`.
   */
  readonly tracer: HandlerTracer;
  /** Count 1 of metric `name` under its own dimensions (one EMF line at once; nothing where metrics are off). */
  readonly countBy: (name: string, dimensions: Record<string, string>) => void;
  /** Add metrics during an invocation; {@link Observability.instrument} or {@link Observability.publish} emits them. */
  readonly metrics: Metrics;
  /**
   * Emit the metrics and dimensions added so far as one EMF line (or drop them where metrics are
   * off), and start afresh. Nothing is written when no metric was added.
   */
  publish(): void;
  /** `handler` with {@link Observability.publish} after every invocation, also a failed one. */
  instrument<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
}

export interface ObservabilityOptions {
  /** @default a Powertools Logger with `POWERTOOLS_SERVICE_NAME` and `POWERTOOLS_LOG_LEVEL` from `env` */
  logger?: Logger;
}

/** Powertools' reading of a boolean environment variable; `undefined` when unset or unrecognised. */
function flag(value: string | undefined): boolean | undefined {
  const v = value?.trim().toLowerCase();
  if (v === undefined) return undefined;
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  return undefined;
}

const onLambda = (env: Env): boolean => Boolean(env.AWS_EXECUTION_ENV);

/** X-Ray tracing: on Lambda, unless `POWERTOOLS_TRACE_ENABLED=false`. */
function tracingEnabled(env: Env): boolean {
  return onLambda(env) && flag(env.POWERTOOLS_TRACE_ENABLED) !== false;
}

/** EMF metrics: as `POWERTOOLS_METRICS_DISABLED` says when set, otherwise on Lambda only. */
function metricsEnabled(env: Env): boolean {
  return !(flag(env.POWERTOOLS_METRICS_DISABLED) ?? !onLambda(env));
}

/**
 * The logger, tracer and metrics of one handler, created once in its `createHandler`.
 *
 * Powertools reads its own switches from `process.env` too (which holds on Lambda, where `env` is
 * `process.env`); `env` decides on top of that, so a handler created with the local runtime's
 * environment never traces nor prints EMF.
 *
 * @param serviceName `POWERTOOLS_SERVICE_NAME` when `env` has none; the metrics' `service` dimension.
 * @example
 * const { logger, tracer, metrics, instrument } = observability(env, 'stepwise-ingress');
 * const s3 = tracer.captureAWSv3Client(new S3Client({ region: env.AWS_REGION }));
 * return instrument(async (event) => { metrics.addMetric('EmailAccepted', MetricUnit.Count, 1); ... });
 */
export function observability(env: Env, serviceName: string, options: ObservabilityOptions = {}): Observability {
  const service = env.POWERTOOLS_SERVICE_NAME || serviceName;
  const logger =
    options.logger ?? new Logger({ serviceName: service, logLevel: env.POWERTOOLS_LOG_LEVEL as LogLevel | undefined });
  const tracer: HandlerTracer = powertoolsTracer
    ? new powertoolsTracer.Tracer({ serviceName: service, enabled: tracingEnabled(env) })
    : NO_TRACER;
  const metrics = new Metrics({
    namespace: env.POWERTOOLS_METRICS_NAMESPACE || DEFAULT_METRICS_NAMESPACE,
    serviceName: service,
    logger,
  });
  const enabled = metricsEnabled(env);

  const publish = () => {
    // Publishing nothing would only log Powertools' "No application metrics to publish" warning.
    if (enabled && metrics.hasStoredMetrics()) {
      metrics.publishStoredMetrics();
    } else {
      metrics.clearMetrics();
      metrics.clearDimensions();
      metrics.clearMetadata();
    }
  };
  return {
    logger,
    tracer,
    metrics,
    publish,
    countBy: (name, dimensions) => {
      if (!enabled) return;
      // Its own EMF line: the breakdown dimension must not be added to the invocation's other metrics.
      const single = metrics.singleMetric();
      single.addDimensions(dimensions);
      single.addMetric(name, MetricUnit.Count, 1);
    },
    instrument:
      (handler) =>
      async (...args) => {
        try {
          return await handler(...args);
        } finally {
          publish();
        }
      },
  };
}
