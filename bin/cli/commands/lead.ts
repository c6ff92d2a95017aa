import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { causeMessage, InvalidInputError } from '../../../lambdas/lib/errors.ts';
import type { AgentConfig } from '../../../lambdas/lifecycle/conditions.ts';
import { eventFromEnvelope } from '../../../lambdas/lifecycle/envelope.ts';
import { loadAgentConfig, loadLifecycle, parseAgentConfig } from '../../../lambdas/lifecycle/loader.ts';
import { leadHistory, leadStatuses, leadsReport, type LeadHistory } from '../../../lambdas/lifecycle/queries.ts';
import type { Report } from '../../../lambdas/lifecycle/reporting.ts';
import type { LeadStore } from '../../../lambdas/lifecycle/store.ts';
import type { LeadStatus } from '../../../lambdas/lifecycle/transition.ts';
import type { LifecycleSession, ParsedReplayFile } from '../../../infra/local/lifecycle-session.ts';
import { awsOptions } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';

interface SessionOptions {
  config?: string;
  agent?: string;
  inMemory?: boolean;
  env: string;
  json?: boolean;
  /** Drive the emulated scheduler by the events' times (and clock lines). */
  clock?: boolean;
  /** With the clock: where it ends (ISO time). */
  until?: string;
}

interface SourceOptions extends SessionOptions {
  from?: string;
  table?: string;
  region?: string;
}

/** Something the replay could not do: an event the state machine dead-lettered, or a listener delivery that failed. */
export type ReplayFailure =
  | { kind: 'event'; leadId?: string; eventId?: string; error: string }
  | { kind: 'listener'; rule: string; eventType: string; error: string }
  | { kind: 'outbox'; records: number; error: string }
  | { kind: 'timer'; name: string; leadId: string; error: string };

/** `stepwise lead replay --json`. */
export interface ReplayOutput {
  leads: Record<string, LeadStatus>;
  /** Non-blank lines read, events sent, events found already logged (redeliveries), and every line that was not an event (with its line number). */
  lines: { total: number; sent: number; duplicates: number; malformed: ParsedReplayFile['malformed'] };
  failed: ReplayFailure[];
}

function agentConfigOf(opts: SessionOptions): AgentConfig | undefined {
  if (opts.config && opts.agent) throw new InvalidInputError('give --config FILE or --agent NAME, not both');
  if (opts.agent) return loadAgentConfig(opts.agent);
  if (!opts.config) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(opts.config, 'utf8'));
  } catch (e) {
    throw new InvalidInputError(`--config ${opts.config}: ${(e as Error).message}`);
  }
  return parseAgentConfig(raw, opts.config);
}

/** A replay file, read and parsed; malformed lines are reported on stderr (and kept in the result). */
async function readReplayFile(file: string): Promise<ParsedReplayFile> {
  const { parseReplayFile } = await import('../../../infra/local/lifecycle-session.ts');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InvalidInputError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const parsed = parseReplayFile(text);
  for (const m of parsed.malformed) process.stderr.write(`stepwise: ${file}:${m.line}: skipped malformed line: ${m.error}\n`);
  return parsed;
}

/** Run `use` with a local lifecycle session (DynamoDB Local unless --in-memory), stopped afterwards. */
async function withSession<T>(opts: SessionOptions, agentConfig: AgentConfig | undefined, use: (session: LifecycleSession) => Promise<T>): Promise<T> {
  // The SDK's multi-line Node 20 deprecation warning would drown the CLI's own messages.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { LifecycleSession } = await import('../../../infra/local/lifecycle-session.ts');
  const session = await LifecycleSession.start({ env: opts.env, store: opts.inMemory ? 'memory' : 'dynamodb-local', ...(agentConfig && { agentConfig }) });
  try {
    return await use(session);
  } finally {
    await session.stop();
  }
}

function failuresOf(session: LifecycleSession): ReplayFailure[] {
  const events = session.sentDeadLetters.map((d): ReplayFailure => {
    const body = d.body as { envelope?: unknown; error?: { Error?: string; Cause?: string } };
    let ids: { leadId?: string; eventId?: string } = {};
    try {
      const event = eventFromEnvelope(body.envelope);
      ids = { leadId: event.leadId, eventId: event.id };
    } catch {
      // An envelope that cannot be read is itself the failure.
    }
    return { kind: 'event', ...ids, error: [body.error?.Error, causeMessage(body.error?.Cause)].filter(Boolean).join(': ') };
  });
  const listeners = session.listenerDeadLetters.map(
    (d): ReplayFailure => ({ kind: 'listener', rule: d.ruleLogicalId, eventType: d.event['detail-type'], error: d.error.message }),
  );
  const { outbox, timers } = session.publishDeadLetters;
  return [
    ...events,
    ...listeners,
    ...outbox.map((d): ReplayFailure => ({ kind: 'outbox', records: d.records.length, error: d.error })),
    ...timers.map((d): ReplayFailure => ({ kind: 'timer', name: d.request.name, leadId: d.request.leadId, error: d.error })),
  ];
}

function statusLine(leadId: string, s: LeadStatus): string {
  return `${leadId}: ${s.state} (${s.path}), version ${s.version}, conversation ${s.conversation}, ${s.eventCount} events, follow-ups ${s.context.followUpsStopped ? 'stopped' : 'not stopped'}`;
}

function printFailures(failed: ReplayFailure[]): void {
  for (const f of failed) {
    const what =
      f.kind === 'event'
        ? `event ${f.eventId ?? '?'} of lead ${f.leadId ?? '?'} was not applied`
        : f.kind === 'listener'
          ? `${f.rule} failed on ${f.eventType}`
          : f.kind === 'outbox'
            ? `the outbox pipe could not publish ${f.records} state changes`
            : `timer ${f.name} of lead ${f.leadId} was not delivered`;
    process.stderr.write(`stepwise: ${what}: ${f.error}\n`);
  }
  if (failed.length) process.exitCode = 1;
}

async function replay(file: string, opts: SessionOptions): Promise<void> {
  const agentConfig = agentConfigOf(opts);
  const parsed = await readReplayFile(file);
  if (opts.until !== undefined && Number.isNaN(Date.parse(opts.until))) throw new InvalidInputError(`--until ${opts.until} is not an ISO time`);
  // A clock line in the file is a request for the clock, like --clock.
  const clock = Boolean(opts.clock) || parsed.timeline.length > parsed.events.length;
  const output = await withSession(opts, agentConfig, async (session): Promise<ReplayOutput> => {
    await session.replay(parsed.timeline, { clock, ...(opts.until !== undefined && { until: opts.until }) });
    if (clock) process.stderr.write(`${file}: clock at ${new Date(session.scheduler.now()).toISOString()}, ${session.scheduler.fired.length} timers fired, ${session.scheduler.pending.length} pending\n`);
    const leadIds = [...new Set(parsed.events.map((l) => l.event.leadId))];
    return {
      leads: await leadStatuses(session.store, session.definition, leadIds),
      lines: { total: parsed.lines, sent: parsed.events.length, duplicates: session.duplicates, malformed: parsed.malformed },
      failed: failuresOf(session),
    };
  });
  const { total, sent, duplicates, malformed } = output.lines;
  const summary = `${file}: ${total} lines, ${sent} events sent (${duplicates} already logged), ${malformed.length} malformed\n`;
  // The contract fixes stdout to exactly { leads }: the line counts go to stderr beside the malformed-line reports.
  if (opts.json) {
    process.stderr.write(summary);
    printJson({ leads: output.leads });
  } else {
    process.stdout.write(summary);
    for (const [leadId, status] of Object.entries(output.leads)) process.stdout.write(`${statusLine(leadId, status)}\n`);
  }
  printFailures(output.failed);
}

/** Read from a replayed file (local session) or from a deployed table. */
async function withStore<T>(opts: SourceOptions, use: (store: LeadStore) => Promise<T>, onlyLead?: string): Promise<T> {
  if (Boolean(opts.from) === Boolean(opts.table)) throw new InvalidInputError('give exactly one of --from FILE (replay it locally) or --table NAME (a deployed event store)');
  if (opts.table) {
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const [{ DynamoDBClient }, { dynamoLeadStore }] = await Promise.all([import('@aws-sdk/client-dynamodb'), import('../../../lambdas/lifecycle/store.ts')]);
    // Credentials, region and endpoint (AWS_ENDPOINT_URL_DYNAMODB) from the usual SDK settings.
    const client = new DynamoDBClient({ region: opts.region });
    try {
      return await use(dynamoLeadStore(client, opts.table));
    } finally {
      client.destroy();
    }
  }
  const agentConfig = agentConfigOf(opts);
  const parsed = await readReplayFile(opts.from!);
  const lines = onlyLead ? parsed.timeline.filter((l) => !('event' in l) || l.event.leadId === onlyLead) : parsed.timeline;
  const clock = Boolean(opts.clock) || parsed.timeline.length > parsed.events.length;
  return withSession(opts, agentConfig, async (session) => {
    await session.replay(lines, { clock, ...(opts.until !== undefined && { until: opts.until }) });
    printFailures(failuresOf(session));
    return use(session.store);
  });
}

function eventLine(e: LeadHistory['events'][number]): string {
  const move = e.stateBefore === e.stateAfter ? e.stateAfter : `${e.stateBefore} -> ${e.stateAfter}`;
  const actions = e.actions.map((a) => (a.type === 'refuse' ? `refused: ${a.reason}` : a.type)).join(', ');
  return `  ${String(e.seq).padStart(4)}  ${e.time}  c${e.conversation}  ${e.type.padEnd(20)}  ${move}${actions ? `  [${actions}]` : ''}  (${e.id})`;
}

async function show(leadId: string, opts: SourceOptions): Promise<void> {
  const history = await withStore(opts, (store) => leadHistory(store, loadLifecycle(), leadId), leadId);
  if (!history) throw new InvalidInputError(`no events for lead "${leadId}" in ${opts.from ?? `table ${opts.table}`}`);
  if (opts.json) return printJson(history);
  const { events, ...status } = history;
  process.stdout.write(`${statusLine(leadId, status)}\n${events.map(eventLine).join('\n')}\n`);
}

function formatReport(r: Report): string {
  const ms = (v: number | null) => (v === null ? 'n/a' : `${(v / 3_600_000).toFixed(1)} h`);
  return [
    `${r.leads} leads, ${r.events} events`,
    `meetings booked: ${r.meetingsBooked.total} (${Object.entries(r.meetingsBooked.perLead).map(([l, n]) => `${l}: ${n}`).join(', ') || 'none'})`,
    `no-show rate: ${r.noShow.rate === null ? 'n/a' : `${(r.noShow.rate * 100).toFixed(0)}%`} (${r.noShow.missed} missed of ${r.noShow.booked} booked)`,
    `time from first contact to meeting: median ${ms(r.timeToMeeting.medianMs)}, mean ${ms(r.timeToMeeting.meanMs)} over ${Object.keys(r.timeToMeeting.perLead).length} leads`,
    `re-engaged after going cold: ${r.reengagedAfterCold.join(', ') || 'none'}`,
  ].join('\n');
}

async function report(opts: SourceOptions): Promise<void> {
  const r = await withStore(opts, (store) => leadsReport(store));
  if (opts.json) printJson(r);
  else process.stdout.write(`${formatReport(r)}\n`);
}

async function exportChart(opts: { xstate?: boolean; out?: string; json?: boolean }): Promise<void> {
  if (!opts.xstate) throw new InvalidInputError('say which format: --xstate (an XState v5 machine config, which Stately\'s editor imports)');
  const { toXStateConfig } = await import('../../../lambdas/lifecycle/xstate.ts');
  const text = `${JSON.stringify(toXStateConfig(loadLifecycle()), null, 2)}\n`;
  if (!opts.out) return void process.stdout.write(text);
  try {
    writeFileSync(opts.out, text);
  } catch (e) {
    throw new InvalidInputError(`cannot write ${opts.out}: ${(e as Error).message}`);
  }
  if (opts.json) printJson({ file: opts.out, format: 'xstate' });
  else process.stderr.write(`stepwise: wrote ${opts.out}\n`);
}

function sessionOptions(command: Command): Command {
  return command
    .option('--config <file>', 'agent config as JSON: { "goal": null | C, "stopFollowUpsOn": [C, ...] }')
    .option('--agent <name>', "a shipped agent config (statemachines/lead-lifecycle/agents/<name>.json); default: the environment's agent (leads.agent in infra/config.ts: book-meeting)")
    .option('--in-memory', 'keep the event store in memory instead of DynamoDB Local (no Java needed)')
    .option('--env <name>', 'deployment environment whose stack runs locally', 'dev')
    .option('--clock', "play the lead timers (follow-ups, cold, renewals) on an emulated clock driven by the events' times; clock lines { \"clock\": ISO } in the file do the same")
    .option('--until <time>', 'with the clock: move it to this ISO time after the last line (e.g. a year on, for renewals)')
    .option('--json', 'print JSON');
}

function sourceOptions(command: Command): Command {
  return awsOptions(
    sessionOptions(command)
      .option('--from <file>', 'replay this JSON Lines file locally first')
      .option('--table <name>', 'read a deployed event store (DynamoDB table) instead, with the usual AWS credentials'),
    'of --table',
  );
}

const SAMPLES = 'statemachines/lead-lifecycle/samples';

export function register(program: Command): void {
  const lead = program.command('lead').description('The lead lifecycle: replay events through the local bus and state machine, show leads, report, export the statechart.');
  const replayCommand = sessionOptions(
    lead
      .command('replay')
      .description(
        'Put every event of a JSON Lines file ({ "id", "leadId", "type", "time", "detail"? } per line) on the local leads bus, in order ' +
          '(lines with the same time concurrently), and print each lead. Malformed lines are reported with their line number and skipped. ' +
          'With --clock (or { "clock": ISO } lines) the lead timers fire on an emulated clock: months play in milliseconds.',
      )
      .argument('<file>', 'JSON Lines file of lifecycle events'),
  );
  withExamples(replayCommand, [
    `stepwise lead replay ${SAMPLES}/no-show-rebooking.jsonl --agent attend-meeting`,
    `stepwise lead replay ${SAMPLES}/sparky-revival.jsonl --agent book-meeting --clock --until 2026-01-01T00:00:00Z --json`,
  ]).action(action(replay));
  const showCommand = sourceOptions(lead.command('show').description("A lead's state and its event history.").argument('<leadId>', 'the lead'));
  withExamples(showCommand, [`stepwise lead show lead-no-show --from ${SAMPLES}/no-show-rebooking.jsonl --agent attend-meeting --in-memory`]).action(action(show));
  const exportCommand = lead
    .command('export')
    .description("Write the statechart for other tools: --xstate prints an XState v5 machine config (JSON) that Stately's editor imports.")
    .option('--xstate', 'XState v5 machine config (JSON)')
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--json', 'with --out: print { file, format } as JSON (without --out the config itself is the JSON printed)');
  withExamples(exportCommand, ['stepwise lead export --xstate --out lead-lifecycle.xstate.json']).action(action(exportChart));
  const reportCommand = sourceOptions(lead.command('report').description('Reports over the event log: meetings booked, no-show rate, time to meeting, re-engaged after cold.'));
  withExamples(reportCommand, [`stepwise lead report --from ${SAMPLES}/sparky-revival.jsonl --json`]).action(action(report));
}
