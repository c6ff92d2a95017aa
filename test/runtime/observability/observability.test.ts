/** The shared factory: X-Ray and EMF on Lambda only, decided by the handler's `env`; metrics flushed per invocation. */

import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { observability } from '../../../src/runtime/observability.ts';
import { captureEmf, dimensionsOf, namespaceOf, valuesOf } from './emf.ts';

const LAMBDA = { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' };
const xrayMiddleware = (client: DynamoDBClient) =>
  client.middlewareStack.identify().filter((m) => m.startsWith('XRaySDK'));
const client = () => new DynamoDBClient({ region: 'us-east-1' });

/** Every console method and both output streams, to prove nothing is printed. */
function spyOutput() {
  const spies = [
    ...(['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation(() => {}),
    ),
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
  ];
  return () => spies.flatMap((s) => s.mock.calls);
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('tracer', () => {
  it('is a no-op outside Lambda: clients stay unwrapped and nothing is printed', () => {
    const printed = spyOutput();
    for (const env of [{}, { AWS_LAMBDA_FUNCTION_NAME: 'StepFn' }, { ...LAMBDA, POWERTOOLS_TRACE_ENABLED: 'false' }]) {
      const { tracer } = observability(env, 'probe');
      expect(tracer.isTracingEnabled()).toBe(false);
      const captured = tracer.captureAWSv3Client(client());
      expect(xrayMiddleware(captured)).toEqual([]);
    }
    expect(printed()).toEqual([]);
  });

  it('on Lambda makes every call of a captured client an X-Ray subsegment', async () => {
    // Powertools also checks process.env; keep it from patching http/fetch for the rest of this worker.
    vi.stubEnv('AWS_EXECUTION_ENV', LAMBDA.AWS_EXECUTION_ENV);
    vi.stubEnv('POWERTOOLS_TRACER_CAPTURE_HTTPS_REQUESTS', 'false');
    // Run from source, the module loads the X-Ray SDK only when it starts on Lambda.
    vi.resetModules();
    const onLambda = await import('../../../src/runtime/observability.ts');
    const { tracer } = onLambda.observability(LAMBDA, 'probe');
    expect(tracer.isTracingEnabled()).toBe(true);
    expect(xrayMiddleware(tracer.captureAWSv3Client(client()))).toEqual(['XRaySDKInstrumentation - build']);
  });
});

describe('metrics', () => {
  it('publish: one EMF line in the namespace, with the service dimension; then a fresh start', () => {
    const emf = captureEmf();
    const { metrics, publish } = observability({ ...LAMBDA, POWERTOOLS_METRICS_NAMESPACE: 'Acme' }, 'probe');
    metrics.addDimensions({ kind: 'a' });
    metrics.addMetric('Probe', MetricUnit.Count, 2);
    publish();
    metrics.addMetric('Probe', MetricUnit.Count, 1);
    publish();
    const lines = emf.lines();
    expect(lines.map(namespaceOf)).toEqual(['Acme', 'Acme']);
    expect(lines.map(valuesOf)).toEqual([{ Probe: 2 }, { Probe: 1 }]);
    expect(lines.map(dimensionsOf)).toEqual([{ service: 'probe', kind: 'a' }, { service: 'probe' }]);
  });

  it('are on on Lambda, off elsewhere, and POWERTOOLS_METRICS_DISABLED overrides both ways', () => {
    const emf = captureEmf();
    const emits = (env: Record<string, string>) => {
      const before = emf.lines().length;
      const { metrics, publish } = observability(env, 'probe');
      metrics.addMetric('Probe', MetricUnit.Count, 1);
      publish();
      return emf.lines().length > before;
    };
    expect(emits(LAMBDA)).toBe(true);
    expect(emits({})).toBe(false);
    expect(emits({ AWS_LAMBDA_FUNCTION_NAME: 'StepFn' })).toBe(false);
    expect(emits({ ...LAMBDA, POWERTOOLS_METRICS_DISABLED: 'true' })).toBe(false);
    expect(emits({ POWERTOOLS_METRICS_DISABLED: 'false' })).toBe(true);
  });

  it('where metrics are off, publish drops what was added: nothing leaks into the next invocation', () => {
    const emf = captureEmf();
    const { metrics, publish } = observability({}, 'probe');
    metrics.addDimensions({ kind: 'dropped' });
    metrics.addMetric('Dropped', MetricUnit.Count, 1);
    publish();
    expect(metrics.hasStoredMetrics()).toBe(false);
    metrics.addMetric('Next', MetricUnit.Count, 1);
    expect(metrics.serializeMetrics()._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
    expect(emf.lines()).toEqual([]);
  });

  it('instrument publishes after every invocation, also a failed one, and prints nothing when none was added', async () => {
    const emf = captureEmf();
    const { metrics, instrument } = observability(LAMBDA, 'probe');
    const handler = instrument(async (fail: boolean) => {
      metrics.addMetric('Attempt', MetricUnit.Count, 1);
      if (fail) throw new Error('boom');
      return 'ok';
    });
    expect(await handler(false)).toBe('ok');
    await expect(handler(true)).rejects.toThrow('boom');
    await instrument(async () => 'no metrics')();
    expect(emf.lines().map(valuesOf)).toEqual([{ Attempt: 1 }, { Attempt: 1 }]);
    expect(emf.other()).toEqual([]);
  });
});
