import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { Command } from 'commander';
import { InvalidInputError } from '../../core/errors.ts';
import { PROJECT_ROOT, STATEMACHINES_DIR } from '../../core/paths.ts';
import type { AgentConfig } from '../../definitions/lifecycle/agent-config.ts';
import {
  checkAgentConfig,
  listAgentConfigs,
  listLifecycles,
  loadAgentConfig,
  loadLifecycle,
  parseAgentConfig,
} from '../../definitions/lifecycle/loader.ts';
import { lifecycleToMermaid } from '../../definitions/lifecycle/mermaid.ts';
import type { LifecycleDefinition } from '../../definitions/lifecycle/schema.ts';
import type { LifecycleSession, ParsedReplayFile, ReplayFailure } from '../../local/sessions/lifecycle-session.ts';
import { failuresOf } from '../../local/sessions/lifecycle-session.ts';
import { type EntityHistory, entityHistory, entityStatuses, lifecycleReport } from '../../runtime/lifecycle/queries.ts';
import { formatReport } from '../../runtime/lifecycle/reporting.ts';
import type { LifecycleStore } from '../../runtime/lifecycle/store.ts';
import type { EntityStatus } from '../../runtime/lifecycle/transition.ts';
import { awsOptions, envOption } from '../aws-options.ts';
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

/** `stepwise lifecycle <name> replay --json`. */
export interface ReplayOutput {
  /** Under the lifecycle's plural (`leads`): every entity of the file. */
  entities: Record<string, EntityStatus>;
  /**
   * Non-blank lines read, events sent, events found already logged (redeliveries), and every line that was not an event
   * (with its line number).
   */
  lines: { total: number; sent: number; duplicates: number; malformed: ParsedReplayFile['malformed'] };
  failed: ReplayFailure[];
}

function agentConfigOf(def: LifecycleDefinition, opts: SessionOptions): AgentConfig | undefined {
  if (opts.config && opts.agent) throw new InvalidInputError('give --config FILE or --agent NAME, not both');
  if (opts.agent) return loadAgentConfig(opts.agent, def.name);
  if (!opts.config) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(opts.config, 'utf8'));
  } catch (e) {
    throw new InvalidInputError(`--config ${opts.config}: ${(e as Error).message}`);
  }
  const config = parseAgentConfig(raw, opts.config);
  checkAgentConfig(config, def, opts.config);
  return config;
}

/** A replay file, read and parsed; malformed lines are reported on stderr (and kept in the result). */
async function readReplayFile(def: LifecycleDefinition, file: string): Promise<ParsedReplayFile> {
  const { parseReplayFile } = await import('../../local/sessions/lifecycle-session.ts');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InvalidInputError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const parsed = parseReplayFile(text, def);
  for (const m of parsed.malformed)
    process.stderr.write(`stepwise: ${file}:${m.line}: skipped malformed line: ${m.error}\n`);
  return parsed;
}

/** Run `use` with a local session of the lifecycle (DynamoDB Local unless --in-memory), stopped afterwards. */
async function withSession<T>(
  def: LifecycleDefinition,
  opts: SessionOptions,
  agentConfig: AgentConfig | undefined,
  use: (session: LifecycleSession) => Promise<T>,
): Promise<T> {
  // The SDK's multi-line Node 20 deprecation warning would drown the CLI's own messages.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { LifecycleSession } = await import('../../local/sessions/lifecycle-session.ts');
  const session = await LifecycleSession.start({
    lifecycle: def.name,
    env: opts.env,
    store: opts.inMemory ? 'memory' : 'dynamodb-local',
    ...(agentConfig && { agentConfig }),
  });
  try {
    return await use(session);
  } finally {
    await session.stop();
  }
}

function statusLine(id: string, s: EntityStatus): string {
  const followUps =
    s.context.followUpsStopped === undefined
      ? ''
      : `, follow-ups ${s.context.followUpsStopped ? 'stopped' : 'not stopped'}`;
  return `${id}: ${s.state} (${s.path}), version ${s.version}, conversation ${s.conversation}, ${s.eventCount} events${followUps}`;
}

function printFailures(def: LifecycleDefinition, failed: ReplayFailure[]): void {
  for (const f of failed) {
    const what =
      f.kind === 'event'
        ? `event ${f.eventId ?? '?'} of ${def.entity.name} ${f.entityId ?? '?'} was not applied`
        : f.kind === 'unrouted'
          ? `an event ${f.eventType} from ${f.source} was not applied`
          : f.kind === 'listener'
            ? `${f.rule} failed on ${f.eventType}`
            : f.kind === 'outbox'
              ? `the outbox pipe could not publish ${f.records} state changes`
              : `timer ${f.name} of ${def.entity.name} ${f.entityId} was not delivered`;
    process.stderr.write(`stepwise: ${what}: ${f.error}\n`);
  }
  if (failed.length) process.exitCode = 1;
}

async function replay(def: LifecycleDefinition, file: string, opts: SessionOptions): Promise<void> {
  const agentConfig = agentConfigOf(def, opts);
  const parsed = await readReplayFile(def, file);
  if (opts.until !== undefined && Number.isNaN(Date.parse(opts.until)))
    throw new InvalidInputError(`--until ${opts.until} is not an ISO time`);
  // A clock line in the file is a request for the clock, like --clock.
  const clock = Boolean(opts.clock) || parsed.timeline.length > parsed.events.length;
  const output = await withSession(def, opts, agentConfig, async (session): Promise<ReplayOutput> => {
    await session.replay(parsed.timeline, { clock, ...(opts.until !== undefined && { until: opts.until }) });
    if (clock)
      process.stderr.write(
        `${file}: clock at ${new Date(session.scheduler.now()).toISOString()}, ${session.scheduler.fired.length} timers fired, ${session.scheduler.pending.length} pending\n`,
      );
    const ids = [...new Set(parsed.events.map((l) => l.event.entityId))];
    return {
      entities: await entityStatuses(session.store, session.definition, ids),
      lines: {
        total: parsed.lines,
        sent: parsed.events.length,
        duplicates: session.duplicates,
        malformed: parsed.malformed,
      },
      failed: failuresOf(session),
    };
  });
  const { total, sent, duplicates, malformed } = output.lines;
  const summary = `${file}: ${total} lines, ${sent} events sent (${duplicates} already logged), ${malformed.length} malformed\n`;
  // The contract fixes stdout to exactly { <plural> }: the line counts go to stderr beside the malformed-line reports.
  if (opts.json) {
    process.stderr.write(summary);
    printJson({ [def.entity.plural]: output.entities });
  } else {
    process.stdout.write(summary);
    for (const [id, status] of Object.entries(output.entities)) process.stdout.write(`${statusLine(id, status)}\n`);
  }
  printFailures(def, output.failed);
  // A skipped line is an event not applied as much as a refused one: a script must not take the replay for complete.
  if (malformed.length) process.exitCode = 1;
}

/** Read from a replayed file (local session) or from a deployed table. */
async function withStore<T>(
  def: LifecycleDefinition,
  opts: SourceOptions,
  use: (store: LifecycleStore) => Promise<T>,
  onlyEntity?: string,
): Promise<T> {
  if (Boolean(opts.from) === Boolean(opts.table))
    throw new InvalidInputError(
      'give exactly one of --from FILE (replay it locally) or --table NAME (a deployed event store)',
    );
  if (opts.table) {
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const [{ DynamoDBClient }, { dynamoLifecycleStore }] = await Promise.all([
      import('@aws-sdk/client-dynamodb'),
      import('../../runtime/lifecycle/store.ts'),
    ]);
    // Credentials, region and endpoint (AWS_ENDPOINT_URL_DYNAMODB) from the usual SDK settings.
    const client = new DynamoDBClient({ region: opts.region });
    try {
      return await use(dynamoLifecycleStore(client, opts.table));
    } finally {
      client.destroy();
    }
  }
  const agentConfig = agentConfigOf(def, opts);
  const parsed = await readReplayFile(def, opts.from!);
  const lines = onlyEntity
    ? parsed.timeline.filter((l) => !('event' in l) || l.event.entityId === onlyEntity)
    : parsed.timeline;
  const clock = Boolean(opts.clock) || parsed.timeline.length > parsed.events.length;
  return withSession(def, opts, agentConfig, async (session) => {
    await session.replay(lines, { clock, ...(opts.until !== undefined && { until: opts.until }) });
    printFailures(def, failuresOf(session));
    return use(session.store);
  });
}

function eventLine(e: EntityHistory['events'][number]): string {
  const move = e.stateBefore === e.stateAfter ? e.stateAfter : `${e.stateBefore} -> ${e.stateAfter}`;
  const actions = e.actions.map((a) => (a.type === 'refuse' ? `refused: ${a.reason}` : a.type)).join(', ');
  return `  ${String(e.seq).padStart(4)}  ${e.time}  c${e.conversation}  ${e.type.padEnd(20)}  ${move}${actions ? `  [${actions}]` : ''}  (${e.id})`;
}

async function show(def: LifecycleDefinition, id: string, opts: SourceOptions): Promise<void> {
  const history = await withStore(def, opts, (store) => entityHistory(store, def, id), id);
  if (!history)
    throw new InvalidInputError(`no events for ${def.entity.name} "${id}" in ${opts.from ?? `table ${opts.table}`}`);
  const { entityId, events, ...status } = history;
  if (opts.json) return printJson({ [def.entity.key]: entityId, ...status, events });
  process.stdout.write(`${statusLine(id, status)}\n${events.map(eventLine).join('\n')}\n`);
}

async function report(def: LifecycleDefinition, opts: SourceOptions): Promise<void> {
  // The agent whose config the replay applies (--agent, --config) also gets its part of the report.
  const config = agentConfigOf(def, opts);
  const agent = config && { name: opts.agent ?? basename(opts.config!, '.json'), config };
  const r = await withStore(def, opts, (store) => lifecycleReport(store, def, agent));
  if (opts.json) printJson(r);
  else process.stdout.write(`${formatReport(def, r, config)}\n`);
}

async function exportChart(
  def: LifecycleDefinition,
  opts: { xstate?: boolean; mermaid?: boolean; out?: string; json?: boolean },
): Promise<void> {
  if (Boolean(opts.xstate) === Boolean(opts.mermaid))
    throw new InvalidInputError(
      "say which format: --xstate (an XState v5 machine config, which Stately's editor imports) or --mermaid (a Mermaid state diagram)",
    );
  const format = opts.mermaid ? 'mermaid' : 'xstate';
  const text = opts.mermaid
    ? lifecycleToMermaid(def)
    : `${JSON.stringify((await import('../../definitions/lifecycle/xstate.ts')).toXStateConfig(def), null, 2)}\n`;
  if (!opts.out) return void process.stdout.write(text);
  try {
    writeFileSync(opts.out, text);
  } catch (e) {
    throw new InvalidInputError(`cannot write ${opts.out}: ${(e as Error).message}`);
  }
  if (opts.json) printJson({ file: opts.out, format });
  else process.stderr.write(`stepwise: wrote ${opts.out}\n`);
}

function sessionOptions(command: Command, name: string): Command {
  return command
    .option('--config <file>', 'agent config as JSON: { "goal": null | C, "stopFollowUpsOn": [C, ...] }')
    .option(
      '--agent <name>',
      `a shipped agent config (statemachines/${name}/agents/<name>.json); default: the environment's agent (lifecycles.${name}.agent in stepwise.config.ts)`,
    )
    .option('--in-memory', 'keep the event store in memory instead of DynamoDB Local (no Java needed)')
    .addOption(envOption('whose stack runs locally'))
    .option(
      '--clock',
      'play the timers (follow-ups, cold, renewals, delayed transitions) on an emulated clock driven by the events\' times; clock lines { "clock": ISO } in the file do the same',
    )
    .option(
      '--until <time>',
      'with the clock: move it to this ISO time after the last line (e.g. a year on, for renewals)',
    )
    .option('--json', 'print JSON');
}

function sourceOptions(command: Command, name: string): Command {
  return awsOptions(
    sessionOptions(command, name)
      .option('--from <file>', 'replay this JSON Lines file locally first')
      .option('--table <name>', 'read a deployed event store (DynamoDB table) instead, with the usual AWS credentials'),
    'of --table',
  );
}

/** The command line that reaches `command` (`stepwise lifecycle orders`, `stepwise lead`). */
const commandPath = (command: Command): string =>
  command.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name();

/** The first sample replay file of the lifecycle and the first entity in it, for the help's examples. */
function firstSample(name: string): { file: string; entity: string } | undefined {
  const dir = join(STATEMACHINES_DIR, name, 'samples');
  const file = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.jsonl'))
        .sort()[0]
    : undefined;
  if (!file) return undefined;
  try {
    const { key } = loadLifecycle(name).entity;
    const first = readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .find((line) => line.includes(`"${key}"`));
    return {
      file: relative(PROJECT_ROOT, join(dir, file)).split('\\').join('/'),
      entity: String((JSON.parse(first!) as Record<string, unknown>)[key]),
    };
  } catch {
    // A broken statechart or sample must not break the help: the examples then use placeholders.
    return undefined;
  }
}

/**
 * The `replay`, `show`, `report` and `export` commands of the lifecycle `name`, under `command`:
 * `stepwise lifecycle <name> …`, and any alias a project gives them (the lead example registers
 * `stepwise lead` from its own cli.ts). The statechart is loaded when a command runs.
 */
export function registerLifecycle(command: Command, name: string): Command {
  const def = () => loadLifecycle(name);
  const self = commandPath(command);
  const { file: sample, entity } = firstSample(name) ?? {
    file: `statemachines/${name}/samples/events.jsonl`,
    entity: 'ID',
  };
  const agentExample = listAgentConfigs(name)[0];
  const replayCommand = sessionOptions(
    command
      .command('replay')
      .description(
        `Put every event of a JSON Lines file ({ "id", "<entity key>", "type", "time", "detail"? } per line) on the local ${name} bus, in order ` +
          '(lines with the same time concurrently), and print each entity. Malformed lines (and events EventBridge would refuse, of 256 KiB or more) are reported with their line number and skipped; ' +
          'they and events not applied make the exit code 1. With --clock (or { "clock": ISO } lines) the timers fire on an emulated clock.',
      )
      .argument('<file>', 'JSON Lines file of lifecycle events'),
    name,
  );
  withExamples(replayCommand, [
    `${self} replay ${sample} --in-memory`,
    `${self} replay ${sample} --in-memory --clock --json`,
  ]).action(action((file: string, opts: SessionOptions) => replay(def(), file, opts)));
  const showCommand = sourceOptions(
    command.command('show').description("An entity's state and its event history.").argument('<id>', 'the entity id'),
    name,
  );
  withExamples(showCommand, [`${self} show ${entity} --from ${sample} --in-memory`]).action(
    action((id: string, opts: SourceOptions) => show(def(), id, opts)),
  );
  const exportCommand = command
    .command('export')
    .description(
      "Write the statechart for other tools: --xstate prints an XState v5 machine config (JSON) that Stately's editor imports (delayed transitions as `after`); --mermaid a Mermaid state diagram.",
    )
    .option('--xstate', 'XState v5 machine config (JSON)')
    .option('--mermaid', 'Mermaid state diagram (stateDiagram-v2)')
    .option('--out <file>', 'write to this file instead of stdout')
    .option(
      '--json',
      'with --out: print { file, format } as JSON (without --out the config itself is the JSON printed)',
    );
  withExamples(exportCommand, [`${self} export --xstate --out ${name}.xstate.json`, `${self} export --mermaid`]).action(
    action((opts: { xstate?: boolean; mermaid?: boolean; out?: string; json?: boolean }) => exportChart(def(), opts)),
  );
  const reportCommand = sourceOptions(
    command
      .command('report')
      .description(
        "Reports over the event log: entities, events, where the entities are, and the statechart's reports; with --agent (or --config), also that agent's goal rate and the reports its config declares.",
      ),
    name,
  );
  withExamples(reportCommand, [
    `${self} report --from ${sample} --in-memory --json`,
    ...(agentExample ? [`${self} report --from ${sample} --in-memory --agent ${agentExample}`] : []),
  ]).action(action((opts: SourceOptions) => report(def(), opts)));
  return command;
}

export function register(program: Command): void {
  const lifecycle = program
    .command('lifecycle')
    .description(
      'A lifecycle (statemachines/<name>/statechart.yaml): replay events through the local bus and state machine, show entities, report, export.',
    );
  for (const name of listLifecycles())
    registerLifecycle(lifecycle.command(name).description(`The ${name} lifecycle.`), name);
}
