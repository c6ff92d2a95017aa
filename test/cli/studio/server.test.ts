/**
 * The Studio server over HTTP (no browser): what it serves, the API over the records, the live
 * stream, and its safety: loopback only, changes only with the page's token from the page's
 * origin, and no request reads a file outside the project's state.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Studio, startStudio } from '../../../src/cli/studio/server.ts';
import { loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { recordEvalRun } from '../../../src/evals/eval-runs.ts';
import { stateDirs } from '../../../src/local/records/state-dirs.ts';
import {
  AWS_ARN,
  AWS_EXECUTION,
  AWS_FIXTURE,
  EXECUTIONS_FIXTURE_DIR,
  recordedExecution,
} from '../../support/fixtures.ts';

const VALID = recordedExecution('case-desk-valid').name;
const REVIEW = recordedExecution('checkpoint-review-resumed').name;

const SECRET = 'TOP-SECRET-OUTSIDE-THE-STATE';
let root: string;
let studio: Studio;
let dirs: ReturnType<typeof stateDirs>;

/** A raw request: the path is sent as written (no URL normalization), with the headers given. */
function raw(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: studio.port, method, path, headers: { Host: `127.0.0.1:${studio.port}`, ...headers } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const change = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  raw(
    'POST',
    path,
    {
      'Content-Type': 'application/json',
      'X-Stepwise-Token': studio.token,
      Origin: `http://127.0.0.1:${studio.port}`,
      ...headers,
    },
    JSON.stringify(body),
  );

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'stepwise-studio-'));
  dirs = stateDirs(join(root, 'state'));
  writeFileSync(join(root, 'secret.json'), JSON.stringify({ secret: SECRET }));
  mkdirSync(dirs.executions, { recursive: true });
  for (const fixture of ['case-desk-valid', 'checkpoint-review-resumed'] as const)
    copyFileSync(
      join(EXECUTIONS_FIXTURE_DIR, `${fixture}.json`),
      join(dirs.executions, `${recordedExecution(fixture).name}.json`),
    );
  const cases = loadEvalCases(loadWorkflow('case-desk').dir).slice(0, 1);
  const report = {
    passed: 1,
    failed: 0,
    total: 1,
    cases: [{ id: cases[0]!.scenario_id, passed: true, failures: [], steps: [] }],
  };
  recordEvalRun('case-desk', report, cases, 'offline', dirs.evals, new Date('2025-03-14T10:00:00Z'));
  recordEvalRun(
    'case-desk',
    { ...report, passed: 0, failed: 1, cases: [{ ...report.cases[0]!, passed: false }] },
    cases,
    'offline',
    dirs.evals,
    new Date('2025-03-14T11:00:00Z'),
  );
  studio = await startStudio({ port: 0, dirs });
});
afterAll(async () => {
  await studio?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('what Studio serves', () => {
  it('listens on 127.0.0.1 only and serves the page with its token, a strict CSP and the bundled UI (nothing from elsewhere)', async () => {
    expect(studio.url).toBe(`http://127.0.0.1:${studio.port}/`);
    const page = await raw('GET', '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain(`<meta name="stepwise-token" content="${studio.token}">`);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'.*frame-ancestors 'none'/);
    expect(page.body).not.toMatch(/https?:\/\//);
    const script = await raw('GET', '/assets/studio.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost|www\.w3\.org)[a-z]/i);
    expect((await raw('GET', '/assets/studio.css')).status).toBe(200);
  });

  it('lists workflows with their graph and the per-step statistics of the local executions', async () => {
    const wf = JSON.parse((await raw('GET', '/api/workflows/case-desk')).body);
    expect(wf.stateMachine).toBe('Stepwise-CaseDesk-dev-case-desk');
    expect(wf.graph.nodes.map((n: { id: string }) => n.id)).toEqual(
      expect.arrayContaining(['Start', '01-read-request', '03a-open-case', '03a-open-case.route', 'Done']),
    );
    expect(wf.graph.nodes.find((n: { id: string }) => n.id === '02-look-up')).toMatchObject({
      kind: 'code',
      stats: { runs: 1 },
    });
    expect(wf.samples).toContain('valid.eml');
    const pick = JSON.parse((await raw('GET', '/api/workflows/consensus-pick')).body);
    expect(pick.graph.nodes.find((n: { id: string }) => n.id === '02-pick.wave-1')).toMatchObject({
      kind: 'map',
    });
    expect(pick.graph.nodes.find((n: { id: string }) => n.id === '02-pick.round')).toMatchObject({
      kind: 'choice',
      comment: expect.stringMatching(/^Counter round/),
    });
  });

  it('imports a GetExecutionHistory file, lists it among the executions, and filters by workflow, status, outcome and source', async () => {
    const imported = await change('/api/imports', {
      history: JSON.parse(readFileSync(AWS_FIXTURE, 'utf8')),
      executionArn: AWS_ARN,
    });
    expect(imported.status).toBe(200);
    expect(JSON.parse(imported.body)).toEqual({
      name: AWS_EXECUTION,
      workflow: 'case-desk',
      status: 'SUCCEEDED',
    });
    const names = async (query: string) =>
      JSON.parse((await raw('GET', `/api/executions?${query}`)).body).executions.map((e: { name: string }) => e.name);
    expect(await names('')).toHaveLength(3);
    expect(await names('workflow=checkpoint-review')).toEqual([REVIEW]);
    expect(await names('source=imported')).toEqual([AWS_EXECUTION]);
    expect(await names('status=SUCCEEDED&outcome=05-confirm&workflow=case-desk')).toHaveLength(2);
    expect(await names('status=FAILED')).toEqual([]);
  });

  it('shows one execution step by step: decision, latency, model request with tokens and cost, tool calls, path and raw events', async () => {
    const view = JSON.parse((await raw('GET', `/api/executions/${AWS_EXECUTION}`)).body);
    expect(view.record).toMatchObject({ source: 'imported', status: 'SUCCEEDED', outcome: '05-confirm' });
    const opened = view.steps.find((s: { name: string }) => s.name === '03a-open-case');
    expect(opened.decision).toEqual({ next: '05-confirm', decidedBy: 'model', reason: expect.any(String) });
    expect(opened.latencyMs).toBeGreaterThan(0);
    expect(opened.transcript.system[0].text).toContain('Call `open_case` once');
    expect(opened.transcript.toolConfig.tools.map((t: { toolSpec: { name: string } }) => t.toolSpec.name)).toEqual([
      'open_case',
      'route',
    ]);
    expect(opened.usage.inputTokens).toBeGreaterThan(0);
    expect(opened.cost).toMatchObject({ modelId: 'anthropic.claude-3-5-haiku-20241022-v1:0', usd: expect.any(Number) });
    expect(opened.cost.usd).toBeGreaterThan(0);
    expect(opened.toolCalls[0]).toMatchObject({
      tool: 'open_case',
      result: { caseId: expect.stringMatching(/^CASE-/) },
    });
    expect(view.path.states).toMatchObject({ Start: 1, '03a-open-case': 1, Done: 1 });
    expect(view.path.edges).toContainEqual(['02-look-up.route', '03a-open-case']);
    expect(view.eventCount).toBe(34);
    expect(JSON.parse((await raw('GET', `/api/executions/${AWS_EXECUTION}/events`)).body)).toHaveLength(34);
  });

  it('gives the fork form of a step: its step input to edit, the tool results it got, and checks an edited input', async () => {
    const form = JSON.parse((await raw('GET', `/api/executions/${VALID}/fork?from=1`)).body);
    expect(form.point).toEqual({ index: 1, step: '02-look-up', entryState: '02-look-up' });
    expect(Object.keys(form.stepInput).sort()).toEqual(['error', 'input', 'previous']);
    expect(form.toolResults.lookup_case.status).toBe('open');
    const ok = JSON.parse(
      (await change(`/api/executions/${VALID}/fork/check`, { from: 1, stepInput: form.stepInput })).body,
    );
    expect(ok.problems).toEqual([]);
    const bad = JSON.parse(
      (
        await change(`/api/executions/${VALID}/fork/check`, {
          from: 1,
          stepInput: { ...form.stepInput, previous: { ...form.stepInput.previous, count: -1 } },
        })
      ).body,
    );
    expect(bad.problems[0].path).toBe('previous.count');
  });

  it('lists eval runs per workflow, shows one with expected trails, and diffs two', async () => {
    const evals = JSON.parse((await raw('GET', '/api/evals')).body);
    const runs = evals.find((w: { workflow: string }) => w.workflow === 'case-desk').runs;
    expect(runs).toHaveLength(2);
    const run = JSON.parse((await raw('GET', `/api/evals/case-desk/${runs[0].id}`)).body);
    expect(Object.values(run.expected)[0]).toContain('01-read-request');
    const diff = JSON.parse((await raw('GET', `/api/evals/case-desk/diff?a=${runs[1].id}&b=${runs[0].id}`)).body);
    expect(diff.changed).toHaveLength(1);
  });

  it('tells the live stream when a record changes', async () => {
    const received = new Promise<string>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: studio.port, path: '/api/live', headers: { Host: `127.0.0.1:${studio.port}` } },
        (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
            // Earlier changes (the import above) may come first.
            if (text.includes('copy-of-valid')) {
              resolve(text);
              req.destroy();
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
      setTimeout(
        () => copyFileSync(join(dirs.executions, `${VALID}.json`), join(dirs.executions, 'copy-of-valid.json')),
        200,
      );
    });
    expect(await received).toMatch(/event: change\ndata: \{"executions":\[[^\]]*"copy-of-valid"/);
  });
});

describe('safety', () => {
  it.each([
    ['another host (DNS rebinding)', { Host: 'evil.example:80' }],
    ['a host on the right port but another name', { Host: 'studio.attacker.test:1' }],
  ])('refuses %s, for the page and the API', async (_, headers) => {
    for (const path of ['/', '/api/overview', '/api/executions']) {
      const res = await raw('GET', path, headers);
      expect(res.status).toBe(421);
      expect(res.body).not.toContain(studio.token);
    }
  });

  it.each([
    ['no token', { 'X-Stepwise-Token': '' }, 403],
    ['a wrong token', { 'X-Stepwise-Token': 'x'.repeat(32) }, 403],
    ['another origin', { Origin: 'http://evil.example' }, 403],
    ['a cross-site fetch', { 'Sec-Fetch-Site': 'cross-site' }, 403],
    ['a form post (not JSON)', { 'Content-Type': 'text/plain' }, 415],
  ])('refuses a change with %s', async (_, headers, status) => {
    const res = await change(
      '/api/imports',
      { history: JSON.parse(readFileSync(AWS_FIXTURE, 'utf8')), executionArn: AWS_ARN },
      headers as Record<string, string>,
    );
    expect(res.status).toBe(status);
    const resumed = await change(`/api/pauses/${VALID}/resume`, { output: {} }, headers as Record<string, string>);
    expect(resumed.status).toBe(status);
  });

  it('refuses changes by GET, and answers no CORS preflight', async () => {
    expect((await raw('GET', '/api/runs')).status).toBe(404);
    const preflight = await raw('OPTIONS', '/api/imports', {
      Origin: 'http://evil.example',
      'Access-Control-Request-Method': 'POST',
    });
    expect(preflight.status).toBe(405);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  const TRAVERSALS = [
    '/api/executions/..%2F..%2Fsecret',
    '/api/executions/..%2F..%2F..%2Fsecret',
    '/api/executions/%2E%2E',
    '/api/executions/..%5C..%5Csecret',
    '/api/executions/secret%00',
    '/api/executions/..%252F..%252Fsecret',
    '/api/executions/..%2F..%2Fsecret/fork?from=0',
    '/api/workflows/..%2F..%2F..%2Fpackage',
    '/api/workflows/..',
    '/api/evals/..%2F..%2F/secret',
    '/api/evals/case-desk/..%2F..%2F..%2Fsecret',
    '/api/evals/..%2F..%2Fexecutions/diff?a=x&b=y',
    `/api/diff?a=..%2F..%2Fsecret&b=${VALID}`,
    '/api/jobs/..%2F..%2Fsecret',
    '/assets/..%2F..%2F..%2F..%2Fpackage.json',
    '/assets/../../../../package.json',
    '/assets/%2e%2e/%2e%2e/server.ts',
    '/../secret.json',
    '/%2E%2E/%2E%2E/secret.json',
    '/api/executions/%E0%A4%A',
  ];
  it.each(TRAVERSALS)('reads no file outside the state: GET %s', async (path) => {
    const res = await raw('GET', path);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body).not.toContain(SECRET);
    expect(res.body).not.toContain('"name": "stepwise"');
    expect(res.body).not.toContain('startStudio');
  });

  it.each([
    ['/api/runs', { workflow: 'case-desk', sample: '../../../package.json' }],
    ['/api/runs', { workflow: '../../..', sample: 'secret.json' }],
    ['/api/pauses/..%2F..%2Fsecret/resume', { output: {} }],
    ['/api/executions/..%2F..%2Fsecret/fork', { from: 0 }],
    [
      '/api/imports',
      {
        history: { events: [{ id: 1, type: 'ExecutionStarted', timestamp: 0 }] },
        executionArn: 'arn:aws:states:r:1:execution:sm:../../secret',
      },
    ],
    [
      '/api/imports',
      {
        history: { events: [{ id: 1, type: 'ExecutionStarted', timestamp: 0 }] },
        executionArn: 'arn:aws:states:r:1:execution:sm:..',
      },
    ],
  ])('reads or writes no file outside the state: POST %s', async (path, body) => {
    const res = await change(path, body);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body).not.toContain(SECRET);
    expect(readFileSync(join(root, 'secret.json'), 'utf8')).toContain(SECRET);
  });
});

describe('running a mail or an input of one’s own', () => {
  it('refuses a pasted input larger than Step Functions takes, before anything runs', async () => {
    const res = await change('/api/runs', { workflow: 'checkpoint-review', input: { note: 'x'.repeat(300 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body).toContain('the input is over 262144 bytes');
  });

  it('refuses an uploaded .eml over 10 MB', async () => {
    const res = await change('/api/runs', { workflow: 'case-desk', eml: 'x'.repeat(10 * 1024 * 1024 + 1) });
    expect(res.status).toBe(400);
    expect(res.body).toContain('an .eml of at most');
  });

  it('takes exactly one of a sample, an .eml and an input', async () => {
    for (const body of [
      { workflow: 'case-desk' },
      { workflow: 'case-desk', sample: 'spam.eml', eml: 'From: a@example.com\r\n\r\nhi' },
    ]) {
      const res = await change('/api/runs', body);
      expect(res.status).toBe(400);
      expect(res.body).toContain('give one of sample, eml or input');
    }
  });
});
