/**
 * Test fixture: a handler module (`createHandler(env)`, the project convention) that adds one
 * metric per invocation and reports whether its tracer is on, so a test can see what the local
 * runtime's environment does to the shared observability wiring.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Env } from '../../../src/core/env.ts';
import { observability } from '../../../src/runtime/observability.ts';

export function createHandler(env: Env) {
  const { tracer, metrics, instrument } = observability(env, 'probe');
  return instrument(async () => {
    metrics.addMetric('Probe', MetricUnit.Count, 1);
    return {
      tracing: tracer.isTracingEnabled(),
      env: {
        POWERTOOLS_TRACE_ENABLED: env.POWERTOOLS_TRACE_ENABLED,
        POWERTOOLS_METRICS_DISABLED: env.POWERTOOLS_METRICS_DISABLED,
      },
    };
  });
}
