/**
 * Differential test: for every (leaf, event type) pair — and each leaf with follow-ups stopped or
 * not — the generated Express state machine, run locally on the synthesized ASL with the real Task
 * handlers, and `applyEvent` called directly agree on the snapshot, the logged events and the
 * `member.state_changed` written to the outbox; and the execution passes through the Task the statechart names.
 */
import { isDeepStrictEqual } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { OUTBOX_FILTER } from '../../../src/cdk/stacks/lifecycle-stack.ts';
import type { AgentConfig } from '../../../src/definitions/lifecycle/agent-config.ts';
import { routeOf } from '../../../src/definitions/lifecycle/routes.ts';
import type { EntitySnapshot, LoggedEvent } from '../../../src/definitions/lifecycle/schema.ts';
import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import { matches } from '../../../src/local/cloud/eventbridge/pattern.ts';
import { eventFromEnvelope } from '../../../src/runtime/lifecycle/envelope.ts';
import { changesOf } from '../../../src/runtime/lifecycle/handlers/outbox.ts';
import { recordingCrm, recordingFollowUpChannel, recordingNotifier } from '../../../src/runtime/lifecycle/ports.ts';
import { stateChangeOf } from '../../../src/runtime/lifecycle/state-changes.ts';
import { memoryLifecycleStore } from '../../../src/runtime/lifecycle/store.ts';
import { applyEvent, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { def } from '../../runtime/lifecycle/support.ts';
import { lifecycleApp } from '../sessions/lifecycle/support.ts';

/** Goals and stop conditions that fire on several event types, so raised events are compared too. */
const config: AgentConfig = {
  goal: { anyOf: [{ event: 'call.attended' }, { event: 'deal.closed', where: { value: { gte: 10000 } } }] },
  stopFollowUpsOn: [{ event: 'link.clicked' }, { event: 'call.booked' }],
};
const store = memoryLifecycleStore();
const published: unknown[] = [];
const deadLetters: unknown[] = [];
let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await LocalRuntime.create({
    app: lifecycleApp().app,
    services: {
      store,
      crm: recordingCrm(),
      notifier: recordingNotifier(),
      followUpChannel: recordingFollowUpChannel(),
    },
    historyDir: false,
    extraEnv: { AGENT_CONFIG: JSON.stringify(config) },
    serviceIntegrations: {
      'arn:aws:states:::events:putEvents': (input: { Entries: unknown[] }) => {
        published.push(...input.Entries);
        return {
          Entries: input.Entries.map((_, i) => ({ EventId: `ev-${published.length}-${i}` })),
          FailedEntryCount: 0,
        };
      },
      'arn:aws:states:::sqs:sendMessage': (input: unknown) => {
        deadLetters.push(input);
        return { MessageId: 'm' };
      },
    },
  });
});

/** Put the member in `snapshot` with one first event (the store only appends continuing logs). */
async function seed(memberId: string, snapshot: EntitySnapshot): Promise<EntitySnapshot> {
  const seeded = { ...snapshot, eventCount: 1 };
  const event: LoggedEvent = {
    id: `${memberId}-seed`,
    entityId: memberId,
    seq: 1,
    type: 'crm.state_set',
    time: '2025-01-01T00:00:00Z',
    conversation: snapshot.conversation,
    stateBefore: def.initial,
    stateAfter: snapshot.state,
    actions: [],
  };
  await store.append(memberId, 0, { snapshot: seeded, events: [event] });
  return seeded;
}

/** A detail that makes the event meaningful: a CRM target, a deal value over the goal's threshold. */
function detailFor(type: string): Record<string, unknown> | undefined {
  if (type === 'crm.state_set') return { state: 'booked' };
  if (type === 'deal.closed') return { value: 12000 };
  if (type === 'link.clicked') return { url: 'https://acme.test/pricing' };
  return undefined;
}

/** Equal as JSON (what crosses every Lambda and Step Functions boundary), whatever the key order. */
const same = (a: unknown, b: unknown) =>
  isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));

const cases = def.leaves.flatMap((leaf) =>
  [false, true].flatMap((followUpsStopped) =>
    [...def.events, 'member.sneezed'].map((type) => ({ leaf, followUpsStopped, type })),
  ),
);

describe('the generated state machine agrees with applyEvent', () => {
  it(`on all ${cases.length} (leaf, follow-ups stopped, event type) cases`, async () => {
    const mismatches: string[] = [];
    const runCase = async ({ leaf, followUpsStopped, type }: (typeof cases)[number], i: number) => {
      const memberId = `diff-${i}`;
      const before = await seed(memberId, {
        ...initialSnapshot(def),
        state: leaf,
        context: { followUpsStopped },
        version: 3,
        conversation: 2,
        progress: { matched: [] },
      });
      const envelope = {
        version: '0',
        id: `eb-${i}`,
        'detail-type': type,
        source: 'stepwise.crm',
        account: '123456789012',
        time: '2025-02-03T10:00:00Z',
        region: 'us-east-1',
        resources: [],
        detail: { memberId, ...detailFor(type) },
      };
      const expected = applyEvent(def, before, eventFromEnvelope(def, envelope), config);
      const execution = await runtime.startExecution(def.name, envelope);
      const entered = execution.events
        .filter((e) => e.type?.endsWith('StateEntered'))
        .map((e) => e.stateEnteredEventDetails!.name);
      const events = (await store.listEvents(memberId)).slice(1);
      const change = stateChangeOf(def, before, expected);
      // What the outbox holds for this member: the state machine no longer publishes, the stream does.
      const outbox = store.streamRecords.filter(
        (r) =>
          matches(OUTBOX_FILTER, r) && (r.dynamodb.NewImage as { pk: { S: string } }).pk.S === `ENTITY#${memberId}`,
      );
      const sent = changesOf(outbox);
      const label = `${leaf}${followUpsStopped ? ' (stopped)' : ''} + ${type}`;
      if (execution.status !== 'SUCCEEDED')
        mismatches.push(`${label}: ${execution.status} ${JSON.stringify(execution.error)}`);
      else if (!entered.includes(routeOf(def, type)))
        mismatches.push(`${label}: did not pass ${routeOf(def, type)} (${entered.join(' > ')})`);
      else if (!same(await store.getEntity(memberId), expected.snapshot)) mismatches.push(`${label}: snapshot differs`);
      else if (!same(events, expected.events)) mismatches.push(`${label}: events differ`);
      else if (!same(sent, change ? [change] : [])) mismatches.push(`${label}: published ${JSON.stringify(sent)}`);
    };
    for (let i = 0; i < cases.length; i += 25)
      await Promise.all(cases.slice(i, i + 25).map((c, j) => runCase(c, i + j)));
    expect(mismatches).toEqual([]);
    expect(deadLetters).toEqual([]);
    expect(published).toEqual([]);
    // The cases exercise every kind of outcome: transitions, logged-only events, refusals, raised events, restarts.
    const all = await store.listAllEvents();
    expect(new Set(all.flatMap((e) => e.actions.map((a) => a.type)))).toEqual(
      new Set(['clearFollowUpStop', 'stopFollowUps', 'startConversation', 'refuse']),
    );
    expect(all.some((e) => e.type === 'goal.hit') && all.some((e) => e.type === 'follow_up.stopped')).toBe(true);
  });
});
