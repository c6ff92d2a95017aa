import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import * as z from 'zod';
import { InvalidInputError } from '../../core/errors.ts';
import { DEFAULT_PAUSES_DIR } from '../../local/records/pauses.ts';
import { DEFAULT_STATE_DIRS } from '../../local/records/state-dirs.ts';
import { sendOutsideEvent } from '../../local/sessions/workflow-session.ts';
import type { EventOutcome } from '../../runtime/triggers/event-wait/waits.ts';
import { awsOptions, envOption } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import { logLevelFor, modelOption, type SessionFlags, verboseOption, withCleanStdout } from '../session-output.ts';

interface SendEventFlags extends SessionFlags {
  detail?: string;
  detailFile?: string;
  time?: string;
  env: string;
  dir: string;
  events: string;
  json?: boolean;
}

/** The detail is outside input: a JSON object, as EventBridge requires. */
const Detail = z.string().transform((text, ctx) => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: `the detail is not JSON: ${(e as Error).message}` });
    return z.NEVER;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    ctx.addIssue({ code: 'custom', message: 'the detail must be a JSON object' });
    return z.NEVER;
  }
  return value as Record<string, unknown>;
});

const Time = z.iso.datetime({ offset: true }).transform((t) => new Date(t));

/** The event the flags describe. @throws InvalidInputError naming what is wrong. */
function eventDetail(flags: SendEventFlags): { detail: Record<string, unknown>; time?: Date } {
  if ((flags.detail === undefined) === (flags.detailFile === undefined))
    throw new InvalidInputError('give exactly one of --detail JSON, --detail-file FILE');
  let text = flags.detail;
  if (flags.detailFile !== undefined) {
    try {
      text = readFileSync(flags.detailFile, 'utf8');
    } catch (e) {
      throw new InvalidInputError(`--detail-file: ${(e as Error).message}`);
    }
  }
  const detail = Detail.safeParse(text);
  if (!detail.success) throw new InvalidInputError(detail.error.issues[0]!.message);
  if (flags.time === undefined) return { detail: detail.data };
  const time = Time.safeParse(flags.time);
  if (!time.success) throw new InvalidInputError(`--time is not an ISO date and time: ${flags.time}`);
  return { detail: detail.data, time: time.data };
}

/** One line per outcome: what it resumed, or why nothing. */
export function formatOutcome(o: EventOutcome): string {
  const at = [o.step, o.key !== undefined && `key ${o.key}`, o.execution].filter(Boolean).join(', ');
  const what = o.outcome === 'resumed' ? 'resumed' : `unmatched (${o.reason})`;
  return `${o.detailType} from ${o.source}: ${what}${at ? ` - ${at}` : ''}\n`;
}

export function register(program: Command): void {
  const command = program
    .command('send-event')
    .description(
      'Deliver one outside event to the local executions paused at an event step, as the deployed resumer does: the ' +
        'one whose source, detail-type and correlation key match resumes with the detail (once; a second matching event ' +
        'resumes nothing); at or after its deadline it takes its timeout route instead. Every outcome (resumed, or ' +
        'unmatched: no-waiting-execution, already-resumed, after-deadline) is appended to --events and printed.',
    )
    .argument('<source>', 'the event’s source (an event step’s event.source)')
    .argument('<detail-type>', 'the event’s detail-type (an event step’s event.detailType)')
    .option('--detail <json>', 'the event’s detail, a JSON object')
    .option('--detail-file <file>', 'read the detail from a file')
    .option('--time <iso>', 'when the event happened (ISO 8601); default now')
    .option('--dir <dir>', 'where paused executions are kept', DEFAULT_PAUSES_DIR)
    .option('--events <file>', 'where every event’s outcome is kept (JSON lines)', DEFAULT_STATE_DIRS.outsideEvents)
    .addOption(modelOption())
    .addOption(envOption('whose stack runs locally'))
    .option('--json', 'print the outcomes as a JSON array')
    .addOption(verboseOption());
  awsOptions(command, 'for --model bedrock');
  withExamples(command, [
    `stepwise send-event shop.payments PaymentReceived --detail '{"order":{"id":"A-1"},"amount":42}'`,
  ]);
  command.action(
    action(async (source: string, detailType: string, flags: SendEventFlags) => {
      const { detail, time } = eventDetail(flags);
      const outcomes = await withCleanStdout(() =>
        sendOutsideEvent(
          { source, detailType, detail, ...(time && { time }) },
          {
            env: flags.env,
            model: flags.model,
            logLevel: logLevelFor(flags),
            pausesDir: flags.dir,
            eventsFile: flags.events,
          },
        ),
      );
      if (flags.json) printJson(outcomes);
      else process.stdout.write(outcomes.map(formatOutcome).join(''));
    }),
  );
}
