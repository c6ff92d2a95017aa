/** Capture what Powertools Metrics writes: the EMF lines a Lambda's log group turns into CloudWatch metrics. */
import { afterEach, beforeEach, vi } from 'vitest';

export interface Emf {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [key: string]: unknown;
}

/**
 * Start capturing EMF lines. Call it BEFORE the handler is created: Powertools reads its switches
 * when `Metrics` is constructed, from `process.env`. In dev mode (`POWERTOOLS_DEV`) it writes with
 * the global console (the spy below sees it) but publishes nothing unless
 * `POWERTOOLS_METRICS_DISABLED=false`. The handler's own `env` must still switch metrics on: off
 * Lambda they are off unless that env says `POWERTOOLS_METRICS_DISABLED=false`.
 * Undo with `vi.unstubAllEnvs()` and `vi.restoreAllMocks()`.
 */
export function captureEmf(): { lines: () => Emf[]; other: () => unknown[][] } {
  vi.stubEnv('POWERTOOLS_DEV', 'true');
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  const isEmf = (args: unknown[]) => typeof args[0] === 'string' && args[0].startsWith('{"_aws"');
  return {
    lines: () => log.mock.calls.filter(isEmf).map(([line]) => JSON.parse(line as string) as Emf),
    other: () => log.mock.calls.filter((args) => !isEmf(args)),
  };
}

/** The one metric directive of an EMF line. */
const directive = (emf: Emf) => {
  if (emf._aws.CloudWatchMetrics.length !== 1)
    throw new Error(`expected one metric directive, got ${emf._aws.CloudWatchMetrics.length}`);
  return emf._aws.CloudWatchMetrics[0]!;
};

/** Metric name → value. */
export const valuesOf = (emf: Emf): Record<string, unknown> =>
  Object.fromEntries(directive(emf).Metrics.map((m) => [m.Name, emf[m.Name]]));

/** Metric name → unit. */
export const unitsOf = (emf: Emf): Record<string, string> =>
  Object.fromEntries(directive(emf).Metrics.map((m) => [m.Name, m.Unit]));

/** Dimension name → value, over every dimension set of the line. */
export const dimensionsOf = (emf: Emf): Record<string, unknown> =>
  Object.fromEntries(
    directive(emf)
      .Dimensions.flat()
      .map((name) => [name, emf[name]]),
  );

export const namespaceOf = (emf: Emf): string => directive(emf).Namespace;

/** Capture EMF in every test of the file (fresh per test, undone after each). */
export function useEmfCapture(): { lines: () => Emf[]; other: () => unknown[][] } {
  let emf: ReturnType<typeof captureEmf>;
  beforeEach(() => {
    emf = captureEmf();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });
  return { lines: () => emf.lines(), other: () => emf.other() };
}
