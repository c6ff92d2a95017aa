/**
 * The local runtime keeps X-Ray and EMF off, even for a function whose environment looks like
 * Lambda's: no X-Ray errors without a daemon, and no EMF lines in a CLI's stdout.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import type { CfnTemplate } from '../../../src/local/cloud/intrinsics.ts';
import { fromTemplates } from '../../../src/local/cloud/synth.ts';
import { captureEmf } from '../../runtime/observability/emf.ts';

const LAMBDA = 'AWS_Lambda_nodejs22.x';
const template: CfnTemplate = {
  Resources: {
    ProbeFn: {
      Type: 'AWS::Lambda::Function',
      Metadata: { 'stepwise:entry': 'test/runtime/observability/probe-handler.ts' },
      // As if the function's environment said it runs on Lambda: only the runtime's own settings keep telemetry off.
      Properties: { Timeout: 10, Environment: { Variables: { AWS_EXECUTION_ENV: LAMBDA } } },
    },
  },
};

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('local runtime observability', () => {
  it('passes POWERTOOLS_TRACE_ENABLED=false and POWERTOOLS_METRICS_DISABLED=true: no trace, no EMF, no output', async () => {
    const emf = captureEmf();
    // Powertools itself would trace here (it reads process.env); the handler's env must say no.
    vi.stubEnv('AWS_EXECUTION_ENV', LAMBDA);
    vi.stubEnv('POWERTOOLS_TRACER_CAPTURE_HTTPS_REQUESTS', 'false');
    const runtime = await LocalRuntime.create({ app: fromTemplates({ Probe: template }), historyDir: false });
    const result = await runtime.invokeFunction('ProbeFn', {});
    expect(result).toEqual({
      tracing: false,
      env: { POWERTOOLS_TRACE_ENABLED: 'false', POWERTOOLS_METRICS_DISABLED: 'true' },
    });
    expect(emf.lines()).toEqual([]);
    expect(emf.other()).toEqual([]);
  });

  it("lets extraEnv switch metrics back on (to see a local run's EMF)", async () => {
    const emf = captureEmf();
    const runtime = await LocalRuntime.create({
      app: fromTemplates({ Probe: template }),
      historyDir: false,
      extraEnv: { POWERTOOLS_METRICS_DISABLED: 'false' },
    });
    await runtime.invokeFunction('ProbeFn', {});
    expect(emf.lines().map((l) => l.Probe)).toEqual([1]);
  });
});
