/**
 * Studio with `--otlp`: a sample run through Studio's HTTP API is exported, once it ends, as an
 * OpenTelemetry trace to an OTLP/HTTP receiver on 127.0.0.1; a receiver that refuses it leaves the
 * run standing and says so as a warning.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudio } from '../../../src/cli/studio/server.ts';
import { readLocalExecution } from '../../../src/local/records/history.ts';
import { type StateDirs, stateDirs } from '../../../src/local/records/state-dirs.ts';
import { attr, type OtlpReceiver, spansOf, startOtlpReceiver } from '../../support/otlp-receiver.ts';

let root: string;
let runs = 0;
let receiver: OtlpReceiver;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'stepwise-studio-otlp-'));
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await new Promise((resolve) => receiver?.server.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

/** Run the consensus-pick sample through Studio's API; Studio is closed (its jobs settled) before this returns. */
async function runSample(otlp: string, warnings: string[]): Promise<{ name: string; dirs: StateDirs }> {
  const dirs = stateDirs(join(root, String(runs++)));
  const studio = await startStudio({ port: 0, dirs, otlp, assets: new Map(), onWarning: (m) => warnings.push(m) });
  try {
    const response = await fetch(`${studio.url}api/runs`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Stepwise-Token': studio.token,
        Origin: studio.url.replace(/\/$/, ''),
      },
      body: JSON.stringify({ workflow: 'consensus-pick', sample: 'vote.json', model: 'offline' }),
    });
    expect(response.status).toBe(200);
    const { name } = (await response.json()) as { name: string };
    expect(name).toEqual(expect.any(String));
    return { name, dirs };
  } finally {
    await studio.close();
  }
}

describe('Studio --otlp', () => {
  it('exports a run started from Studio as one trace with a span per step', { timeout: 300_000 }, async () => {
    const warnings: string[] = [];
    const { name, dirs } = await runSample(`${receiver.url}/v1/traces`, warnings);
    expect(warnings).toEqual([]);
    expect(receiver.traces).toHaveLength(1);
    const spans = spansOf(receiver.traces[0]!);
    const roots = spans.filter((s) => !s.parentSpanId);
    expect(roots.map((s) => s.name)).toEqual(['workflow consensus-pick']);
    expect(attr(roots[0]!, 'stepwise.execution.name')).toEqual({ stringValue: name });
    const steps = spans.filter((s) => s.name.startsWith('step ')).map((s) => s.name.slice('step '.length));
    expect(readLocalExecution(name, dirs.executions).status).toBe('SUCCEEDED');
    expect(steps[0]).toBe('01-start');
  });

  it('keeps the run when the collector refuses the trace, with a warning naming the execution', {
    timeout: 300_000,
  }, async () => {
    const warnings: string[] = [];
    const { name } = await runSample(`${receiver.url}/nowhere`, warnings);
    expect(warnings).toEqual([expect.stringContaining(`${name}: its trace was not exported`)]);
    expect(receiver.traces).toHaveLength(1);
  });
});
