/** The lead lifecycle through the generated Express ASL: a session's start, then the sample leads replayed. */
import { isDeepStrictEqual } from 'node:util';
import { loadAgentConfig } from '../../../src/definitions/lifecycle/loader.ts';
import { LifecycleSession } from '../../../src/local/sessions/lifecycle-session.ts';
import type { BenchRun } from '../harness.ts';
import { appliedEvents, BENCH_AGENT, bookMeetingLogs, type LeadLog, renamed, replayLog } from '../workloads.ts';

/**
 * Every execution succeeded, nothing was dead-lettered, and every event is accounted for: each
 * lead's log is its events applied once each in order (with the events they raised) and its
 * snapshot is the replay of that log.
 */
export async function assertLifecycleRan(
  session: LifecycleSession,
  config: ReturnType<typeof loadAgentConfig>,
  leads: readonly LeadLog[],
): Promise<void> {
  const failed = session.failedExecutions.length + session.sentDeadLetters.length + session.listenerDeadLetters.length;
  if (failed)
    throw new Error(
      `${session.failedExecutions.length} failed executions, ${session.sentDeadLetters.length} dead-lettered events, ${session.listenerDeadLetters.length} failed listener deliveries`,
    );
  // JSON drops undefined fields, which a stored snapshot does not have.
  const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
  for (const lead of leads) {
    const expected = replayLog(session.definition, config, appliedEvents(lead));
    const [actual, log] = await Promise.all([
      session.store.getEntity(lead.leadId),
      session.store.listEvents(lead.leadId),
    ]);
    if (!isDeepStrictEqual(plain(log), plain(expected.log)))
      throw new Error(
        `${lead.leadId}: logged ${log.map((e) => e.id).join(' ')}, expected ${expected.log.map((e) => e.id).join(' ')}`,
      );
    if (!isDeepStrictEqual(plain(actual), plain(expected.snapshot)))
      throw new Error(
        `${lead.leadId}: ended ${JSON.stringify(actual)}, a replay of its log gives ${JSON.stringify(expected.snapshot)}`,
      );
  }
}

export async function lifecycleSession(bench: BenchRun): Promise<void> {
  const config = loadAgentConfig(BENCH_AGENT, 'lead-lifecycle');
  const logs = bookMeetingLogs();
  const lines = logs.reduce((n, log) => n + log.lines.length, 0);
  const session = await bench.once({
    name: 'lifecycle.session.start',
    description: `LifecycleSession.start({ lifecycle: 'lead-lifecycle', store: 'memory' }): synth of the lifecycle stack, runtime and bus`,
    unit: 'starts',
    fn: () => LifecycleSession.start({ lifecycle: 'lead-lifecycle', store: 'memory', agentConfig: config }),
  });
  if (!session) return;
  try {
    let round = 0;
    /** The sample leads under fresh ids, replayed one after the other, each event drained before the next. */
    const replayAll = async () => {
      const copies = logs.map((log) => renamed(log, `r${round++}`));
      for (const copy of copies) await session.replay(copy.lines);
      return copies;
    };
    const workload = `the ${logs.length} ${BENCH_AGENT} sample leads (${lines} events with redeliveries), one event at a time`;
    await bench.once({
      name: 'lifecycle.session.replay.first',
      description: `first replay of ${workload}: loads the handler modules`,
      opsPerIteration: lines,
      unit: 'events',
      fn: replayAll,
    });
    await bench.repeated({
      name: 'lifecycle.session.replay',
      description: `replay of ${workload}: bus → Express state machine → memory store → listeners`,
      warmupIterations: 2,
      iterations: 30,
      opsPerIteration: lines,
      unit: 'events',
      fn: async () => {
        await replayAll();
      },
    });

    // Leads are independent: the k-th event of every lead goes out in one PutEvents, drained before the next.
    const COPIES = 4;
    const concurrentLeads = logs.length * COPIES;
    const rounds = Math.max(...logs.map((log) => log.lines.length));
    let lastCopies: LeadLog[] = [];
    await bench.repeated({
      name: 'lifecycle.session.concurrent',
      description: `${concurrentLeads} leads at once (${COPIES} copies of each sample, ${lines * COPIES} events): each lead's k-th event in one put, drained per round`,
      warmupIterations: 1,
      iterations: 15,
      opsPerIteration: lines * COPIES,
      unit: 'events',
      fn: async () => {
        const copies = Array.from({ length: COPIES }, () => logs.map((log) => renamed(log, `c${round++}`))).flat();
        for (let k = 0; k < rounds; k++) {
          await session.put(copies.flatMap((copy) => copy.lines[k]?.event ?? []));
          await session.drain();
        }
        lastCopies = copies;
      },
    });
    await assertLifecycleRan(session, config, lastCopies);
  } finally {
    await session.stop();
  }
}
