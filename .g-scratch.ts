import './infra/local/polyfills.ts';
import { LifecycleSession } from './infra/local/lifecycle-session.ts';
process.env.CDK_VALIDATION = 'false';
const t0 = Date.now();
const s = await LifecycleSession.start({ store: (process.argv[2] as any) ?? 'memory' });
console.log('start ms', Date.now() - t0);
const t1 = Date.now();
await s.replay([
  { line: 1, event: { id: 'e1', leadId: 'L1', type: 'agent.message_sent', time: '2026-01-01T00:00:00Z' } },
  { line: 2, event: { id: 'e2', leadId: 'L1', type: 'lead.message_sent', time: '2026-01-01T00:00:01Z' } },
  { line: 3, event: { id: 'e3', leadId: 'L1', type: 'meeting.booked', time: '2026-01-01T00:00:02Z', detail: { cal: 'x' } } },
  { line: 4, event: { id: 'e3', leadId: 'L1', type: 'meeting.booked', time: '2026-01-01T00:00:03Z' } },
]);
console.log('replay ms', Date.now() - t1);
console.log(await s.store.getLead('L1'));
console.log((await s.store.listEvents('L1')).map((e) => [e.seq, e.id, e.type, e.stateBefore, e.stateAfter]));
console.log('failed', s.failedExecutions.map((e) => [e.status, JSON.stringify(e.error)]), s.sentDeadLetters, s.listenerDeadLetters.map((d) => d.error.message));
console.log('crm', s.crm.calls.length, 'notif', s.notifier.sent.map((n) => n.subject), 'fu', s.followUps.scheduled);
console.log(JSON.stringify(s.bus.published.slice(0,2).concat(s.bus.published.slice(4,5)), null, 1)); console.log(s.bus.rules.map(r => [r.logicalId, r.eventBusName, r.targets.map(t=>t.arn)]));
console.log(s.executions[0].events.filter(e => e.type.endsWith("StateEntered")).map(e => e.stateEnteredEventDetails.name)); console.log(JSON.stringify(s.runtime.stateMachine("lead-lifecycle").definition.States.AfterPersist));
await s.stop();
