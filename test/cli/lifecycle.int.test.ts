/**
 * The lifecycle CLI contract, through a project's own alias of `stepwise lifecycle <name>` (the fixture project's
 * `stepwise member`, for member-journey): `replay` (exact JSON shape, malformed lines reported with their line number
 * and counted, a redelivered id counted once), `show`, `report`, `--config`, `--table`. Commands run in-process
 * through commander (in memory, to stay fast), plus one real `npx stepwise member replay --json` on DynamoDB Local
 * exactly as users and the contract check run it, in a copy of the fixture project.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lifecycleToMermaid } from '../../src/definitions/lifecycle/mermaid.ts';
import { toXStateConfig } from '../../src/definitions/lifecycle/xstate.ts';
import { sessionDynamoDb } from '../../src/local/cloud/dynamodb-connection.ts';
import { LifecycleSession, parseReplayFile } from '../../src/local/sessions/lifecycle-session.ts';
import { lifecycleReport } from '../../src/runtime/lifecycle/queries.ts';
import * as member from '../fixtures/project/lambdas/workflows/member-journey/cli.ts';
import { agent, def, LIFECYCLE } from '../runtime/lifecycle/support.ts';
import { runCli, useCliCapture } from '../support/cli.ts';
import { copyFixtureProject, FIXTURE_STATEMACHINES } from '../support/fixture-project.ts';
import { run } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

const io = useCliCapture();
/** Run `stepwise member <args>` in-process; returns the exit code. */
const cli = (...args: string[]) => runCli([member], 'member', ...args);

const tempDir = useTempDirs('stepwise-member-cli-');
const dir = tempDir();
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** Two members; line 3 is not JSON, line 5 lacks a time, line 6 repeats line 2's id (a redelivery). */
const REPLAY = [
  '{"id":"e1","memberId":"member-a","type":"agent.message_sent","time":"2026-01-01T00:00:00Z"}',
  '{"id":"e2","memberId":"member-a","type":"member.message_sent","time":"2026-01-01T00:01:00Z","detail":{"text":"hi"}}',
  '{"id":"e3","memberId":"member-a",',
  '',
  '{"id":"e4","memberId":"member-b","type":"agent.message_sent"}',
  '{"id":"e2","memberId":"member-a","type":"member.message_sent","time":"2026-01-01T00:02:00Z","detail":{"text":"hi"}}',
  '{"id":"e5","memberId":"member-a","type":"call.booked","time":"2026-01-01T00:03:00Z"}',
  '{"id":"e6","memberId":"member-b","type":"member.message_sent","time":"2026-01-01T00:03:00Z"}',
].join('\n');
const replayFile = file('replay.jsonl', REPLAY);
/** An agent other than the environment's default (attend-call): done at the first booked call or closed deal. */
const either = join(FIXTURE_STATEMACHINES, LIFECYCLE, 'agents', 'either.json');

describe('stepwise member replay', () => {
  it('prints every member in the contract shape, reports malformed lines by number and counts a redelivered id once', async () => {
    // The file has malformed lines: the replay still prints every member, but exits 1 so a script sees the skip.
    expect(await cli('replay', replayFile, '--config', either, '--json', '--in-memory')).toBe(1);
    expect(JSON.parse(io.out)).toEqual({
      members: {
        'member-a': {
          state: 'goal_hit',
          path: 'goal_hit',
          context: { followUpsStopped: false },
          version: 4,
          conversation: 1,
          eventCount: 4, // e1, e2 (once), e5, and the goal.hit it raised
        },
        'member-b': {
          state: 'engaged',
          path: 'active.qualification.engaged',
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

  it('uses the stack default agent (attend-call) without --config, and prints one line per member as text', async () => {
    expect(await cli('replay', replayFile, '--in-memory')).toBe(1); // 2 malformed lines skipped
    expect(io.out).toBe(
      `${replayFile}: 7 lines, 5 events sent (1 already logged), 2 malformed\n` +
        'member-a: booked (active.booked), version 4, conversation 1, 4 events, follow-ups stopped\n' +
        'member-b: engaged (active.qualification.engaged), version 1, conversation 1, 1 events, follow-ups not stopped\n',
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
    expect(await cli('replay', replayFile, '--config', either, '--agent', 'close-big')).toBe(1);
    expect(io.err).toBe('stepwise: give --config FILE or --agent NAME, not both\n');
  });
});

describe('stepwise member show and report', () => {
  const sample = join(FIXTURE_STATEMACHINES, LIFECYCLE, 'samples', 'call-attended.jsonl');

  it('show prints the state and the whole history of one member', async () => {
    expect(
      await cli('show', 'member-attended', '--from', sample, '--agent', 'attend-call', '--json', '--in-memory'),
    ).toBe(0);
    const history = JSON.parse(io.out);
    expect(history).toMatchObject({
      memberId: 'member-attended',
      state: 'goal_hit',
      path: 'goal_hit',
      version: 6,
      conversation: 1,
      eventCount: 6,
    });
    expect(history.events.map((e: { id: string }) => e.id)).toEqual([
      'ca-1',
      'ca-2',
      'ca-3',
      'ca-3:follow_up.stopped',
      'ca-4',
      'ca-4:goal.hit',
    ]);
    io.out = '';
    expect(await cli('show', 'member-attended', '--from', sample, '--agent', 'attend-call', '--in-memory')).toBe(0);
    const lines = io.out.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'member-attended: goal_hit (goal_hit), version 6, conversation 1, 6 events, follow-ups stopped',
    );
    expect(lines[4]).toBe(
      '     4  2026-03-03T14:00:00Z  c1  follow_up.stopped     booked  [stopFollowUps]  (ca-3:follow_up.stopped)',
    );
    expect(lines[6]).toBe(
      '     6  2026-03-05T14:30:00Z  c1  goal.hit              attended -> goal_hit  (ca-4:goal.hit)',
    );
  });

  it('show fails for a member with no events, and needs exactly one source', async () => {
    expect(await cli('show', 'nobody', '--from', sample, '--in-memory')).toBe(1);
    expect(io.err).toBe(`stepwise: no events for member "nobody" in ${sample}\n`);
    io.err = '';
    expect(await cli('show', 'nobody')).toBe(1);
    expect(io.err).toBe(
      'stepwise: give exactly one of --from FILE (replay it locally) or --table NAME (a deployed event store)\n',
    );
  });

  it("report gives the statechart's reports over every member of the file", async () => {
    const all = file(
      'all.jsonl',
      ['call-attended', 'no-show-and-revival']
        .map((s) => readFileSync(join(FIXTURE_STATEMACHINES, LIFECYCLE, 'samples', `${s}.jsonl`), 'utf8'))
        .join(''),
    );
    expect(await cli('report', '--from', all, '--agent', 'attend-call', '--json', '--in-memory')).toBe(0);
    const report = JSON.parse(io.out);
    expect(report).toMatchObject({
      entities: 3,
      reports: {
        callsBooked: { total: 4, perEntity: { 'member-attended': 1, 'member-no-show': 2, 'member-revived': 1 } },
        noShowRate: { count: 1, of: 4, rate: 0.25 },
        revivedFromCold: ['member-revived'],
      },
    });
    expect(report.reports.timeToCall.perEntity['member-attended']).toBe(29 * 3_600_000);
    // The agent the replay applied gets its own part: its goal (call.attended) and the reports its config declares.
    expect(report.agent).toMatchObject({ name: 'attend-call', reports: { attendance: { of: 4 } } });
    io.out = '';
    expect(await cli('report', '--from', all, '--agent', 'attend-call', '--in-memory')).toBe(0);
    expect(io.out).toContain('3 members, 21 events');
    expect(io.out).toContain('no-show rate: 25% (1 call.missed of 4 call.booked)');
    expect(io.out).toContain('replied while cold: member-revived');
    expect(io.out).toMatch(/^agent attend-call: goal hit by \d of 3 members/m);
    expect(io.out).toContain('  calls attended: ');
  });
});

describe('stepwise member replay with the clock', () => {
  const timed = file(
    'timed.jsonl',
    [
      '{"id":"t1","memberId":"member-t","type":"agent.message_sent","time":"2026-01-05T09:00:00Z"}',
      '{"clock":"2026-02-01T00:00:00Z"}',
    ].join('\n'),
  );

  it('a clock line plays the timers: follow-ups, then cold a week after the last one (same JSON shape)', async () => {
    expect(await cli('replay', timed, '--agent', 'attend-call', '--json', '--in-memory')).toBe(0);
    expect(JSON.parse(io.out)).toEqual({
      members: {
        'member-t': {
          state: 'cold',
          path: 'active.qualification.cold',
          context: { followUpsStopped: false },
          version: 2,
          conversation: 1,
          eventCount: 4,
        },
      },
    });
    expect(io.err).toContain('clock at 2026-02-01T00:00:00.000Z, 3 timers fired, 0 pending');
  });

  it('without a clock line or --clock nothing fires; --clock --until plays to the given time', async () => {
    const plain = file(
      'plain.jsonl',
      '{"id":"t1","memberId":"member-t","type":"agent.message_sent","time":"2026-01-05T09:00:00Z"}',
    );
    expect(await cli('replay', plain, '--agent', 'attend-call', '--json', '--in-memory')).toBe(0);
    expect(JSON.parse(io.out).members['member-t']).toMatchObject({ state: 'outreach', eventCount: 1 });
    io.out = '';
    expect(
      await cli(
        'replay',
        plain,
        '--agent',
        'attend-call',
        '--json',
        '--in-memory',
        '--clock',
        '--until',
        '2026-01-08T10:00:00Z',
      ),
    ).toBe(0);
    expect(JSON.parse(io.out).members['member-t']).toMatchObject({ state: 'outreach', eventCount: 2 }); // follow-up 1 after 48 h
    io.err = '';
    expect(await cli('replay', plain, '--in-memory', '--clock', '--until', 'next week')).toBe(1);
    expect(io.err).toBe('stepwise: --until next week is not an ISO time\n');
  });
});

describe('stepwise member export', () => {
  it('--xstate prints the XState v5 machine config, or writes it with --out; without a format it fails in one line', async () => {
    expect(await cli('export', '--xstate')).toBe(0);
    expect(JSON.parse(io.out)).toEqual(toXStateConfig(def));
    const out = join(dir, `${LIFECYCLE}.xstate.json`);
    expect(await cli('export', '--xstate', '--out', out)).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(toXStateConfig(def));
    io.err = '';
    expect(await cli('export')).toBe(1);
    expect(io.err).toMatch(/^stepwise: say which format: --xstate/);
  });

  it('--mermaid prints the state diagram the docs show', async () => {
    io.out = '';
    expect(await cli('export', '--mermaid')).toBe(0);
    expect(io.out).toBe(lifecycleToMermaid(def));
    expect(await cli('export', '--mermaid', '--xstate')).toBe(1);
  });
});

describe('stepwise member on DynamoDB', () => {
  it('npx stepwise member replay --json runs on DynamoDB Local by default', async () => {
    const project = copyFixtureProject(tempDir());
    // The file has malformed lines, so the command exits 1 after printing the members.
    const replayed = await run(project, 'npx', '--no-install', 'stepwise', 'member', 'replay', replayFile, '--json');
    expect(replayed.code, replayed.err).toBe(1);
    expect(JSON.parse(replayed.out).members['member-a']).toEqual({
      state: 'booked',
      path: 'active.booked',
      context: { followUpsStopped: true },
      version: 4,
      conversation: 1,
      eventCount: 4,
    });
  });

  it('show and report read a deployed event store with --table', async () => {
    const ddb = await sessionDynamoDb();
    const session = await LifecycleSession.start({
      lifecycle: LIFECYCLE,
      dynamo: ddb,
      agentConfig: agent('attend-call'),
    });
    const env = { ...process.env };
    try {
      await session.replay(parseReplayFile(REPLAY, def).events);
      const table = session.tableName!;
      Object.assign(process.env, {
        AWS_ENDPOINT_URL_DYNAMODB: ddb.endpoint,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
      });
      expect(await cli('report', '--table', table, '--region', 'us-east-1', '--json')).toBe(0);
      expect(JSON.parse(io.out)).toEqual(await lifecycleReport(session.store, session.definition));
      io.out = '';
      expect(await cli('show', 'member-b', '--table', table, '--region', 'us-east-1', '--json')).toBe(0);
      expect(JSON.parse(io.out)).toMatchObject({ memberId: 'member-b', state: 'engaged', eventCount: 1 });
    } finally {
      process.env = env;
      await session.stop();
      await ddb.stop();
    }
  });
});
