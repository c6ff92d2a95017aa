/**
 * Record and replay through the real CLI, in a copy of the fixture project: `stepwise eval --model openai
 * --record` against a local server speaking the chat-completions wire format keeps every request
 * and response in the workflow's recordings/; `--replay` runs offline from them (the server is
 * stopped) to the same result; after a step's prompt changes, `--replay` fails that case, still
 * writes its reports, and ends with one line naming that step. `--compare` and `--junit` read and write the runs.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatServer, toolCallReply } from '../runtime/models/chat-server.ts';
import { copyFixtureProject } from '../support/fixture-project.ts';
import { stepwise } from '../support/project-copy.ts';

/**
 * A scripted model: it always finishes the step, routing to the last declared edge, with every
 * declared output filled by type. Deterministic, so the recording is.
 */
function scriptedAnswer(body: {
  tools?: {
    function: { name: string; parameters: { properties: Record<string, { type?: string; enum?: string[] }> } };
  }[];
}) {
  const route = body.tools?.find((t) => t.function.name === 'route');
  const props = route?.function.parameters.properties ?? {};
  const args: Record<string, unknown> = { next: props.next?.enum?.at(-1), reason: 'scripted' };
  for (const [name, p] of Object.entries(props)) {
    if (name === 'next' || name === 'reason') continue;
    args[name] =
      p.type === 'number'
        ? 0.9
        : p.type === 'boolean'
          ? false
          : p.type === 'object'
            ? {}
            : 'The export failed because the disk was full.';
  }
  return toolCallReply('route', args, { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 });
}

const server = new ChatServer(scriptedAnswer);
let dir: string;
let baseUrl: string;
const CASE = `scenario_id: record_001
description: A note reviewed and summed up by whatever model is configured.
category: recording
input:
  payload:
    request: "Why did the nightly export fail?"
    notes: [{ path: export.log, text: "02:00 export started; 02:07 disk full; export aborted" }]
expected_output:
  expected_steps:
    - step_name: 01-plan
    - step_name: 02-review
`;
const WF = 'statemachines/checkpoint-review';
/** A panel of models on the summary step: each asked through the same endpoint as the workflow's model. */
const PANEL = ['us.anthropic.claude-haiku-4-5-20251001-v1:0', 'us.amazon.nova-lite-v1:0'];

/** Edit a file of the copy; the edit must apply. */
function edit(file: string, from: string, to: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, 'utf8');
  if (!text.includes(from)) throw new Error(`${file}: no ${from}`);
  writeFileSync(path, text.replace(from, to));
}

beforeAll(async () => {
  dir = copyFixtureProject(mkdtempSync(join(tmpdir(), 'stepwise-record-')), { built: true });
  mkdirSync(join(dir, 'cases'));
  writeFileSync(join(dir, 'cases', 'record_001.yaml'), CASE);
  edit(`${WF}/steps/05-summarize.md`, 'kind: llm\n', `kind: llm\nmodels: [${PANEL.join(', ')}]\n`);
  baseUrl = await server.start();
}, 60_000);
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const evalArgs = ['eval', 'checkpoint-review', '--cases', 'cases', '--json'];

describe('stepwise eval --record / --replay / --compare / --junit', () => {
  it('records against the chat-completions server, replays offline to the same result, and fails a changed prompt naming the step', async () => {
    const recorded = await stepwise(
      dir,
      ...evalArgs,
      '--model',
      'openai',
      '--openai-base-url',
      baseUrl,
      '--openai-model',
      'scripted-8b',
      '--record',
      '--junit',
      'recorded.xml',
    );
    const a = JSON.parse(recorded.out);
    expect(server.calls.length).toBeGreaterThan(0);
    // The panel (05-summarize `models`) asks its own models through the same endpoint.
    expect(new Set(server.calls.map((c) => c.body.model))).toEqual(new Set(['scripted-8b', ...PANEL]));
    const recordings = join(dir, WF, 'recordings');
    expect(readdirSync(recordings).sort()).toEqual(expect.arrayContaining(['02-review', '05-summarize']));
    writeFileSync(join(dir, 'a.json'), recorded.out);
    expect(readFileSync(join(dir, 'recorded.xml'), 'utf8')).toMatch(
      /<testsuite name="checkpoint-review" tests="1" failures="[01]"/,
    );

    const calls = server.calls.length;
    await server.stop();
    const replayed = await stepwise(dir, ...evalArgs, '--replay');
    const b = JSON.parse(replayed.out);
    expect(server.calls.length).toBe(calls);
    const strip = (r: { cases: { id: string; passed: boolean; failures: unknown; steps: unknown }[] }) =>
      r.cases.map(({ id, passed, failures, steps }) => ({ id, passed, failures, steps }));
    expect(strip(b)).toEqual(strip(a));
    expect(b.run.provider).toMatch(/^replay \(openai scripted-8b, /);
    writeFileSync(join(dir, 'b.json'), replayed.out);

    const compared = await stepwise(dir, 'eval', 'checkpoint-review', '--compare', 'a.json', 'b.json');
    expect(compared.code).toBe(0);
    expect(compared.out).toContain('A: openai scripted-8b, step mode');
    expect(compared.out).toContain('No case differs (pass/fail, route, tokens).');

    edit(`${WF}/steps/02-review.md`, 'with `read_note` and report', 'with `read_note` once and report');
    const changed = await stepwise(dir, ...evalArgs, '--replay', '--junit', 'changed.xml');
    expect(changed.code).toBe(1);
    const miss =
      /replay: step 02-review sent a request that was never recorded \([0-9a-f]{12}\): its prompt or input changed since the recording; record again with --record/;
    const lines = changed.err.trim().split('\n');
    expect(lines.at(-1)).toMatch(miss);
    // The miss fails its case only, and the reports are still written, naming it.
    const c = JSON.parse(changed.out);
    expect(c).toMatchObject({ total: 1, failed: 1, cases: [{ id: 'record_001', passed: false }] });
    expect(c.cases[0].failures[0]).toMatchObject({ step: '02-review', why: expect.stringMatching(miss) });
    expect(c.replayMisses[0]).toMatch(miss);
    const junit = readFileSync(join(dir, 'changed.xml'), 'utf8');
    expect(junit).toMatch(/<testsuite name="checkpoint-review" tests="1" failures="1"/);
    expect(junit).toMatch(/replay: step 02-review sent a request that was never recorded/);
  }, 300_000);
});
