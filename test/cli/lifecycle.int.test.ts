/**
 * The `stepwise lead` contract: `replay` (exact JSON shape, malformed lines reported with their
 * line number and counted, a redelivered id counted once), `show`, `report`, `--config`, `--table`.
 * Commands run in-process through commander (in memory, to stay fast), plus one real `npx
 * stepwise lead replay --json` on DynamoDB Local exactly as users and the contract check run it.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as lead from '../../lambdas/workflows/lead-lifecycle/cli.ts';
import { PROJECT_ROOT, STATEMACHINES_DIR } from '../../src/core/paths.ts';
import { loadAgentConfig, loadLifecycle } from '../../src/definitions/lifecycle/loader.ts';
import { sessionDynamoDb } from '../../src/local/cloud/dynamodb-connection.ts';
import { LifecycleSession, parseReplayFile } from '../../src/local/sessions/lifecycle-session.ts';
import { lifecycleReport } from '../../src/runtime/lifecycle/queries.ts';
import { runCli, useCliCapture } from '../support/cli.ts';
import { useTempDirs } from '../support/tmp.ts';

const io = useCliCapture();
/** Run `stepwise lead <args>` in-process; returns the exit code. */
const cli = (...args: string[]) => runCli([lead], 'lead', ...args);

const dir = useTempDirs('stepwise-lead-cli-')();
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** Two leads; line 3 is not JSON, line 5 lacks a time, line 6 repeats line 2's id (a redelivery). */
const REPLAY = [
  '{"id":"e1","leadId":"lead-a","type":"agent.message_sent","time":"2026-01-01T00:00:00Z"}',
  '{"id":"e2","leadId":"lead-a","type":"lead.message_sent","time":"2026-01-01T00:01:00Z","detail":{"text":"hi"}}',
  '{"id":"e3","leadId":"lead-a",',
  '',
  '{"id":"e4","leadId":"lead-b","type":"agent.message_sent"}',
  '{"id":"e2","leadId":"lead-a","type":"lead.message_sent","time":"2026-01-01T00:02:00Z","detail":{"text":"hi"}}',
  '{"id":"e5","leadId":"lead-a","type":"meeting.booked","time":"2026-01-01T00:03:00Z"}',
  '{"id":"e6","leadId":"lead-b","type":"lead.message_sent","time":"2026-01-01T00:03:00Z"}',
].join('\n');
const replayFile = file('replay.jsonl', REPLAY);
const attendMeeting = join(STATEMACHINES_DIR, 'lead-lifecycle', 'agents', 'attend-meeting.json');

describe('stepwise lead replay', () => {
  it('prints every lead in the contract shape, reports malformed lines by number and counts a redelivered id once', async () => {
    // The file has malformed lines: the replay still prints every lead, but exits 1 so a script sees the skip.
    expect(await cli('replay', replayFile, '--config', attendMeeting, '--json', '--in-memory')).toBe(1);
    expect(JSON.parse(io.out)).toEqual({
      leads: {
        'lead-a': {
          state: 'meeting_booked',
          path: 'active.meeting_booked',
          context: { followUpsStopped: true },
          version: 4,
          conversation: 1,
          eventCount: 4, // e1, e2 (once), e5, and the follow_up.stopped it raised
        },
        'lead-b': {
          state: 'engaged',
          path: 'active.lead_qualification.engaged',
          context: { followUpsStopped: false },
          version: 1,
          conversation: 1,
          eventCount: 1,
        },
      },
    });
    expect(io.err).toContain(`${replayFile}: 7 lines, 5 events sent (1 already logged), 2 malformed`);
    expect(io.err).toContain(`${replayFile}:3: skipped malformed line: not JSON`);
    expect(io.err).toContain(`${replayFile}:5: skipped malformed line: time`);
  });

  it('uses the stack default agent (book-meeting) without --config, and prints one line per lead as text', async () => {
    expect(await cli('replay', replayFile, '--in-memory')).toBe(1); // 2 malformed lines skipped
    expect(io.out).toBe(
      `${replayFile}: 7 lines, 5 events sent (1 already logged), 2 malformed\n` +
        'lead-a: goal_hit (goal_hit), version 4, conversation 1, 4 events, follow-ups not stopped\n' +
        'lead-b: engaged (active.lead_qualification.engaged), version 1, conversation 1, 1 events, follow-ups not stopped\n',
    );
  });

  it('fails with one line for an unreadable file, an invalid config, or both --config and --agent', async () => {
    expect(await cli('replay', join(dir, 'missing.jsonl'), '--in-memory')).toBe(1);
    expect(io.err).toMatch(/^stepwise: cannot read .*missing\.jsonl: /);
    io.err = '';
    const bad = file('bad-config.json', JSON.stringify({ goal: { event: 'goal.hit' }, stopFollowUpsOn: [] }));
    expect(await cli('replay', replayFile, '--config', bad, '--in-memory')).toBe(1);
    expect(io.err).toBe(
      `stepwise: ${bad}: goal.event: goal.hit and follow_up.stopped are raised by conditions, they cannot be one\n`,
    );
    io.err = '';
    expect(await cli('replay', replayFile, '--config', attendMeeting, '--agent', 'nurture')).toBe(1);
    expect(io.err).toBe('stepwise: give --config FILE or --agent NAME, not both\n');
  });
});

describe('stepwise lead show and report', () => {
  const sample = join(STATEMACHINES_DIR, 'lead-lifecycle', 'samples', 'no-show-rebooking.jsonl');

  it('show prints the state and the whole history of one lead', async () => {
    expect(
      await cli('show', 'lead-no-show', '--from', sample, '--agent', 'attend-meeting', '--json', '--in-memory'),
    ).toBe(0);
    const history = JSON.parse(io.out);
    expect(history).toMatchObject({
      leadId: 'lead-no-show',
      state: 'goal_hit',
      path: 'goal_hit',
      version: 10,
      conversation: 1,
      eventCount: 10,
    });
    expect(history.events.map((e: { id: string }) => e.id)).toEqual([
      'ns-1',
      'ns-2',
      'ns-3',
      'ns-3:follow_up.stopped',
      'ns-4',
      'ns-5',
      'ns-6',
      'ns-6:follow_up.stopped',
      'ns-7',
      'ns-7:goal.hit',
    ]);
    io.out = '';
    expect(await cli('show', 'lead-no-show', '--from', sample, '--agent', 'attend-meeting', '--in-memory')).toBe(0);
    const lines = io.out.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'lead-no-show: goal_hit (goal_hit), version 10, conversation 1, 10 events, follow-ups stopped',
    );
    expect(lines[5]).toBe('     5  2025-01-09T15:30:00Z  c1  meeting.missed        meeting_booked -> no_show  (ns-4)');
    expect(lines[10]).toBe(
      '    10  2025-01-13T15:00:00Z  c1  goal.hit              meeting_attended -> goal_hit  (ns-7:goal.hit)',
    );
  });

  it('show fails for a lead with no events, and needs exactly one source', async () => {
    expect(await cli('show', 'nobody', '--from', sample, '--in-memory')).toBe(1);
    expect(io.err).toBe(`stepwise: no events for lead "nobody" in ${sample}\n`);
    io.err = '';
    expect(await cli('show', 'nobody')).toBe(1);
    expect(io.err).toBe(
      'stepwise: give exactly one of --from FILE (replay it locally) or --table NAME (a deployed event store)\n',
    );
  });

  it("report gives the statechart's reports over every lead of the file", async () => {
    const all = file(
      'all.jsonl',
      ['sparky-revival', 'no-show-rebooking', 'meeting-booked-as-goal']
        .map((s) => readFileSync(join(STATEMACHINES_DIR, 'lead-lifecycle', 'samples', `${s}.jsonl`), 'utf8'))
        .join(''),
    );
    expect(await cli('report', '--from', all, '--agent', 'attend-meeting', '--json', '--in-memory')).toBe(0);
    const report = JSON.parse(io.out);
    expect(report).toMatchObject({
      entities: 3,
      reports: {
        meetingsBooked: { total: 4, perEntity: { 'lead-sparky': 1, 'lead-no-show': 2, 'lead-meeting-goal': 1 } },
        noShow: { count: 1, of: 4, rate: 0.25 },
        reengagedAfterCold: ['lead-sparky'],
      },
    });
    expect(report.reports.timeToMeeting.perEntity['lead-meeting-goal']).toBe(29 * 3_600_000);
    // The agent the replay applied gets its own part: its goal (meeting.attended) and the reports its config declares.
    expect(report.agent).toMatchObject({ name: 'attend-meeting', reports: { attendance: { of: 4 } } });
    io.out = '';
    expect(await cli('report', '--from', all, '--agent', 'attend-meeting', '--in-memory')).toBe(0);
    expect(io.out).toContain('3 leads, 21 events');
    expect(io.out).toContain('no-show rate: 25% (1 meeting.missed of 4 meeting.booked)');
    expect(io.out).toContain('re-engaged after going cold: lead-sparky');
    expect(io.out).toMatch(/^agent attend-meeting: goal hit by \d of 3 leads/m);
    expect(io.out).toContain('  meetings attended: ');
  });
});

describe('stepwise lead replay with the clock', () => {
  const timed = file(
    'timed.jsonl',
    [
      '{"id":"t1","leadId":"lead-t","type":"agent.message_sent","time":"2026-01-05T09:00:00Z"}',
      '{"clock":"2026-02-01T00:00:00Z"}',
    ].join('\n'),
  );

  it('a clock line plays the timers: follow-ups, then cold a week after the last one (same JSON shape)', async () => {
    expect(await cli('replay', timed, '--agent', 'book-meeting', '--json', '--in-memory')).toBe(0);
    expect(JSON.parse(io.out)).toEqual({
      leads: {
        'lead-t': {
          state: 'cold',
          path: 'active.lead_qualification.cold',
          context: { followUpsStopped: false },
          version: 2,
          conversation: 1,
          eventCount: 5,
        },
      },
    });
    expect(io.err).toContain('clock at 2026-02-01T00:00:00.000Z, 4 timers fired, 0 pending');
  });

  it('without a clock line or --clock nothing fires; --clock --until plays to the given time', async () => {
    const plain = file(
      'plain.jsonl',
      '{"id":"t1","leadId":"lead-t","type":"agent.message_sent","time":"2026-01-05T09:00:00Z"}',
    );
    expect(await cli('replay', plain, '--agent', 'book-meeting', '--json', '--in-memory')).toBe(0);
    expect(JSON.parse(io.out).leads['lead-t']).toMatchObject({ state: 'outreach', eventCount: 1 });
    io.out = '';
    expect(
      await cli(
        'replay',
        plain,
        '--agent',
        'book-meeting',
        '--json',
        '--in-memory',
        '--clock',
        '--until',
        '2026-01-08T10:00:00Z',
      ),
    ).toBe(0);
    expect(JSON.parse(io.out).leads['lead-t']).toMatchObject({ state: 'outreach', eventCount: 2 }); // follow-up 1 after 48 h
    io.err = '';
    expect(await cli('replay', plain, '--in-memory', '--clock', '--until', 'next week')).toBe(1);
    expect(io.err).toBe('stepwise: --until next week is not an ISO time\n');
  });
});

describe('stepwise lead export', () => {
  it('--xstate prints the XState v5 machine config, or writes it with --out; without a format it fails in one line', async () => {
    const { toXStateConfig } = await import('../../src/definitions/lifecycle/xstate.ts');
    const { loadLifecycle } = await import('../../src/definitions/lifecycle/loader.ts');
    expect(await cli('export', '--xstate')).toBe(0);
    expect(JSON.parse(io.out)).toEqual(toXStateConfig(loadLifecycle('lead-lifecycle')));
    const out = join(dir, 'lead-lifecycle.xstate.json');
    expect(await cli('export', '--xstate', '--out', out)).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(toXStateConfig(loadLifecycle('lead-lifecycle')));
    io.err = '';
    expect(await cli('export')).toBe(1);
    expect(io.err).toMatch(/^stepwise: say which format: --xstate/);
  });

  it('--mermaid prints the state diagram the docs show', async () => {
    const { lifecycleToMermaid } = await import('../../src/definitions/lifecycle/mermaid.ts');
    const { loadLifecycle } = await import('../../src/definitions/lifecycle/loader.ts');
    io.out = '';
    expect(await cli('export', '--mermaid')).toBe(0);
    expect(io.out).toBe(lifecycleToMermaid(loadLifecycle('lead-lifecycle')));
    expect(await cli('export', '--mermaid', '--xstate')).toBe(1);
  });
});

describe('stepwise lead on DynamoDB', () => {
  it('npx stepwise lead replay --json runs on DynamoDB Local by default', async () => {
    // The file has malformed lines, so the command exits 1 after printing the leads.
    const failed = await promisify(execFile)(
      'npx',
      ['--no-install', 'stepwise', 'lead', 'replay', replayFile, '--json'],
      { cwd: PROJECT_ROOT },
    ).then(
      () => expect.fail('a replay that skipped malformed lines must exit 1'),
      (e: { code?: number; stdout: string }) => e,
    );
    expect(failed.code).toBe(1);
    const { stdout } = failed;
    expect(JSON.parse(stdout).leads['lead-a']).toEqual({
      state: 'goal_hit',
      path: 'goal_hit',
      context: { followUpsStopped: false },
      version: 4,
      conversation: 1,
      eventCount: 4,
    });
  });

  it('show and report read a deployed event store with --table', async () => {
    const ddb = await sessionDynamoDb();
    const session = await LifecycleSession.start({
      lifecycle: 'lead-lifecycle',
      dynamo: ddb,
      agentConfig: loadAgentConfig('attend-meeting', 'lead-lifecycle'),
    });
    const env = { ...process.env };
    try {
      await session.replay(parseReplayFile(REPLAY, loadLifecycle('lead-lifecycle')).events);
      const table = session.tableName!;
      Object.assign(process.env, {
        AWS_ENDPOINT_URL_DYNAMODB: ddb.endpoint,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
      });
      expect(await cli('report', '--table', table, '--region', 'us-east-1', '--json')).toBe(0);
      expect(JSON.parse(io.out)).toEqual(await lifecycleReport(session.store, session.definition));
      io.out = '';
      expect(await cli('show', 'lead-b', '--table', table, '--region', 'us-east-1', '--json')).toBe(0);
      expect(JSON.parse(io.out)).toMatchObject({ leadId: 'lead-b', state: 'engaged', eventCount: 1 });
    } finally {
      process.env = env;
      await session.stop();
      await ddb.stop();
    }
  });
});
