/** A warranty email through the synthesized ASL (offline model): a session's start, its first email, then more. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthProject } from '../../../src/local/cloud/synth.ts';
import { type RunResult, WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import type { BenchRun } from '../harness.ts';
import { WARRANTY_SAMPLE, withMessageId } from '../workloads.ts';
import { ENV } from './shared.ts';

/** The route an email took, to check every iteration did the same work. */
const routeOf = (result: RunResult) => `${result.status}: ${result.steps.map((s) => `${s.name}→${s.next}`).join(' ')}`;

export async function warrantySession(bench: BenchRun): Promise<void> {
  // Synthesized beforehand (untimed, cached for the process) so the start measures the session, not the synth.
  synthProject(ENV);
  const historyDir = mkdtempSync(join(tmpdir(), 'stepwise-bench-history-'));
  try {
    const session = await bench.once({
      name: 'warranty.session.start',
      // The JVM is a process of its own: its memory is not in this process's deltas.
      description:
        "WorkflowSession.start({ workflow: 'warranty-email', model: offline }), app already synthesized: DynamoDB Local (JVM), its tables, the runtime",
      unit: 'starts',
      // Executions are stored as `stepwise run` stores them, in a folder deleted afterwards.
      fn: () =>
        WorkflowSession.start({
          workflow: 'warranty-email',
          env: ENV,
          model: 'offline',
          logLevel: 'SILENT',
          historyDir,
        }),
    });
    if (!session) return;
    try {
      const raw = readFileSync(WARRANTY_SAMPLE, 'utf8');
      let n = 0;
      const processOne = () => session.deliverEmail(withMessageId(raw, `bench-${n++}`), WARRANTY_SAMPLE);
      const first = await bench.once({
        name: 'warranty.email.first',
        description: 'first valid-warranty.eml of the session: ingress, 4 steps, outbox; loads the handler modules',
        unit: 'emails',
        fn: processOne,
      });
      if (!first) return;
      if (first.status !== 'SUCCEEDED') throw new Error(`the sample email did not succeed: ${first.reason}`);
      const expected = routeOf(first);
      const deviations: string[] = [];
      await bench.repeated({
        name: 'warranty.email',
        description: `valid-warranty.eml under a new Message-ID each time (${first.steps.length} steps, offline model, DynamoDB Local)`,
        warmupIterations: 3,
        iterations: 60,
        unit: 'emails',
        fn: async () => {
          const result = await processOne();
          if (routeOf(result) !== expected) deviations.push(routeOf(result));
        },
      });
      if (deviations.length)
        throw new Error(`${deviations.length} emails took another route than ${expected}, e.g. ${deviations[0]}`);
    } finally {
      await session.close();
    }
  } finally {
    rmSync(historyDir, { recursive: true, force: true });
  }
}
