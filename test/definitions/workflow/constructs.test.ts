/**
 * The construct steps (`map`, `parallel`, `workflow`, `wait`) as definitions: the fixture
 * workflows load, draw, and every misuse is refused in one line naming the file and the field.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BranchFailedError, ItemsFailedError } from '../../../src/core/errors.ts';
import { inlineMapItemLimit, joinItems } from '../../../src/definitions/workflow/constructs/map.ts';
import { joinBranches } from '../../../src/definitions/workflow/constructs/parallel.ts';
import { workflowScopes } from '../../../src/definitions/workflow/constructs/scopes.ts';
import { loadWorkflowFrom } from '../../../src/definitions/workflow/loader.ts';
import { workflowToMermaid } from '../../../src/definitions/workflow/mermaid.ts';
import { FIXTURE_WORKFLOWS } from '../../fixtures/triage-plugin.ts';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A copy of the fixture workflows with `edits` applied (file → [text, replacement] or the whole new text). */
function copyWith(edits: Record<string, [string, string] | string>): string {
  const root = mkdtempSync(join(tmpdir(), 'stepwise-constructs-'));
  roots.push(root);
  for (const name of ['fan-out', 'lookups', 'reminder', 'parent-call', 'child-ticket'])
    cpSync(join(FIXTURE_WORKFLOWS, name), join(root, name), { recursive: true });
  for (const [file, edit] of Object.entries(edits)) {
    const path = join(root, file);
    if (typeof edit === 'string') writeFileSync(path, edit);
    else {
      const text = readFileSync(path, 'utf8');
      if (!text.includes(edit[0])) throw new Error(`${file} has no ${edit[0]}`);
      writeFileSync(path, text.replace(edit[0], edit[1]));
    }
  }
  return root;
}

/** The one-line message of loading `workflow` from `root`. */
function refusal(root: string, workflow: string): string {
  try {
    loadWorkflowFrom(join(root, workflow));
  } catch (e) {
    const message = (e as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    return message;
  }
  throw new Error(`${workflow} loaded`);
}

const load = (name: string) => loadWorkflowFrom(join(FIXTURE_WORKFLOWS, name));

describe('construct steps', () => {
  it('load: items and branches are scopes of their own, the rest is the top', () => {
    const { scopes } = workflowScopes(load('fan-out'));
    expect(scopes.map((s) => [s.owner?.name ?? null, s.name, s.steps.map((x) => x.name)])).toEqual([
      [null, 'top', ['01-classify-all', '03-summarize', '99-hand-off']],
      ['01-classify-all', 'items', ['02-classify']],
    ]);
    const lookups = workflowScopes(load('lookups')).scopes;
    expect(lookups.map((s) => s.steps.map((x) => x.name))).toEqual([
      ['01-look-up', '04-reply', '99-hand-off'],
      ['02-customer'],
      ['03-order', '05-shipment'],
    ]);
    expect(load('reminder').steps.map((s) => s.wait)).toEqual([
      { seconds: 259200 },
      { until: 'input.remindAt' },
      undefined,
      undefined,
    ]);
    expect(load('parent-call').steps[0]!.workflow).toEqual({
      name: 'child-ticket',
      input: { subject: 'input.subject' },
      outputs: ['ticketId'],
    });
  });

  it('draw: items and branches leave and join their step, waits and calls say what they do', () => {
    const fanOut = workflowToMermaid(load('fan-out'));
    expect(fanOut).toContain('state "01-classify-all (map: each input.attachments, 4 at once)" as s_01_classify_all');
    expect(fanOut).toContain('s_01_classify_all --> s_02_classify : each item');
    expect(fanOut).toContain('s_02_classify --> s_01_classify_all : item done');
    expect(fanOut).toContain('class s_01_classify_all construct');
    const lookups = workflowToMermaid(load('lookups'));
    expect(lookups).toContain('s_01_look_up --> s_03_order : branch order');
    expect(lookups).toContain('s_05_shipment --> s_01_look_up : branch done');
    expect(workflowToMermaid(load('reminder'))).toContain('"02-until (wait until input.remindAt)"');
    expect(workflowToMermaid(load('parent-call'))).toContain('"01-open-ticket (workflow: child-ticket)"');
  });

  it.each([
    [
      'a cycle of workflows',
      { 'child-ticket/steps/01-create.md': callBack() },
      'parent-call',
      /01-create\.md: workflow\.name: a cycle of workflows: parent-call → child-ticket → parent-call$/,
    ],
    [
      'an unknown child workflow',
      { 'parent-call/steps/01-open-ticket.md': ['name: child-ticket', 'name: no-such'] },
      'parent-call',
      /workflow\.name: unknown workflow "no-such"/,
    ],
    [
      'a missing items path',
      { 'fan-out/steps/01-classify-all.md': ['items: input.attachments', 'items: data.files'] },
      'fan-out',
      /map\.items: no step produces "files" \(data\.files\)$/,
    ],
    [
      'an items path the input does not declare',
      { 'fan-out/steps/01-classify-all.md': ['items: input.attachments', 'items: input.files'] },
      'fan-out',
      /map\.items: the input schema has no "files"/,
    ],
    [
      'a maxConcurrency over 40',
      { 'fan-out/steps/01-classify-all.md': ['maxConcurrency: 4', 'maxConcurrency: 41'] },
      'fan-out',
      /01-classify-all\.md: map\.maxConcurrency: .*40/,
    ],
    [
      'a maxConcurrency of 0',
      { 'fan-out/steps/01-classify-all.md': ['maxConcurrency: 4', 'maxConcurrency: 0'] },
      'fan-out',
      /map\.maxConcurrency/,
    ],
    [
      'a count and a percentage',
      {
        'fan-out/steps/01-classify-all.md': [
          'toleratedFailures: 1',
          'toleratedFailures: 1\n  toleratedFailurePercentage: 5',
        ],
      },
      'fan-out',
      /map\.toleratedFailures: give a count or a percentage, not both$/,
    ],
    [
      'more items than an inline Map holds',
      { 'fan-out/steps/01-classify-all.md': ['maxItems: 120', 'maxItems: 5000'] },
      'fan-out',
      /map\.maxItems: 5000 items .* at most \d+; more needs a Distributed Map$/,
    ],
    [
      'an item chain that routes out of its items',
      { 'fan-out/steps/02-classify.md': ['next: [DONE]', 'next: [03-summarize]'] },
      'fan-out',
      /"03-summarize" runs in the top of the workflow and in the items of 01-classify-all/,
    ],
    [
      'an unknown item entry',
      { 'fan-out/steps/01-classify-all.md': ['entry: 02-classify', 'entry: 02-nope'] },
      'fan-out',
      /map\.entry: unknown step "02-nope"$/,
    ],
    [
      'a map option on a code step',
      {
        'fan-out/steps/03-summarize.md': [
          'next: [DONE]',
          'next: [DONE]\nmap: { items: input.attachments, entry: 02-classify, output: x }',
        ],
      },
      'fan-out',
      /03-summarize\.md: map: only a map step has this option \(this one is code\)$/,
    ],
    [
      'a wait step without its option',
      { 'reminder/steps/01-three-days.md': ['wait: { seconds: 259200 }\n', ''] },
      'reminder',
      /01-three-days\.md: wait: a wait step needs its wait option$/,
    ],
    [
      'one branch',
      { 'lookups/steps/01-look-up.md': ['    order: 03-order\n', ''] },
      'lookups',
      /parallel\.branches: two or more branches$/,
    ],
    [
      'a construct step with tools',
      { 'lookups/steps/01-look-up.md': ['next: [04-reply]', 'next: [04-reply]\ntools: [x]'] },
      'lookups',
      /01-look-up\.md: tools: a parallel step calls no tools/,
    ],
    [
      'a wait with both seconds and until',
      { 'reminder/steps/01-three-days.md': ['{ seconds: 259200 }', '{ seconds: 1, until: input.remindAt }'] },
      'reminder',
      /wait: exactly one of seconds and until$/,
    ],
    [
      'a wait longer than a year',
      { 'reminder/steps/01-three-days.md': ['259200', '31536001'] },
      'reminder',
      /wait\.seconds/,
    ],
    [
      'a construct with two edges',
      { 'reminder/steps/01-three-days.md': ['next: [02-until]', 'next: [02-until, 03-remind]'] },
      'reminder',
      /next: a wait step goes on to one step/,
    ],
  ] as [string, Record<string, [string, string] | string>, string, RegExp][])(
    'refuses %s in one line',
    (_, edits, workflow, expected) => {
      expect(refusal(copyWith(edits), workflow)).toMatch(expected);
    },
  );
});

/** child-ticket's step that starts parent-call back. */
function callBack(): string {
  return `---\nname: 01-create\ndescription: Calls the parent back.\nversion: 1.0.0\nkind: workflow\nworkflow: { name: parent-call, input: { subject: input.subject } }\nnext: [DONE]\n---\n`;
}

describe('joins', () => {
  const fanOut = load('fan-out');
  const map = fanOut.steps[0]!;
  const item = (index: number, ok: boolean, count: number) =>
    ok
      ? { index, ok, step: '02-classify', fields: { label: `l${index}` }, count }
      : { index, ok, error: { Error: 'StepFailedError', Cause: 'broken' }, count };

  it('keeps item order, reports failed items and counts the longest item for the breaker', () => {
    const joined = joinItems(map, [item(1, false, 3), item(0, true, 4), item(2, true, 3)], 2);
    expect(joined.fields.classifications).toEqual([
      { index: 0, ok: true, step: '02-classify', fields: { label: 'l0' } },
      { index: 1, ok: false, error: { Error: 'StepFailedError', Cause: 'broken' } },
      { index: 2, ok: true, step: '02-classify', fields: { label: 'l2' } },
    ]);
    expect(joined).toMatchObject({ next: '03-summarize', reason: '3 items, 1 failed', innerSteps: 2 });
  });

  it('fails past the tolerated count or percentage, naming the first failed item', () => {
    expect(() => joinItems(map, [item(0, false, 3), item(1, false, 3)], 2)).toThrow(ItemsFailedError);
    expect(() => joinItems(map, [item(0, false, 3), item(1, false, 3)], 2)).toThrow(
      /2 of 2 items failed \(tolerated: 1\); first: item 0/,
    );
    const pct = { ...map, map: { ...map.map!, toleratedFailures: undefined, toleratedFailurePercentage: 50 } };
    expect(joinItems(pct, [item(0, false, 3), item(1, true, 3)], 2).innerSteps).toBe(1);
    expect(() => joinItems(pct, [item(0, false, 3), item(1, false, 3), item(2, true, 3)], 2)).toThrow(/tolerated: 50%/);
  });

  it('joins branches under their names, or fails naming the branch', () => {
    const parallel = load('lookups').steps[0]!;
    const ok = {
      customer: { branch: 'customer', ok: true, step: '02-customer', fields: { name: 'Ada' }, count: 1 },
      order: { branch: 'order', ok: true, step: '05-shipment', fields: { status: 'shipped' }, count: 2 },
    };
    expect(joinBranches(parallel, ok, 0)).toMatchObject({
      fields: { customer: { name: 'Ada' }, order: { status: 'shipped' } },
      innerSteps: 2,
    });
    const failed = {
      ...ok,
      order: { branch: 'order', ok: false, error: { Error: 'StepFailedError', Cause: 'no order' }, count: 1 },
    };
    expect(() => joinBranches(parallel, failed, 0)).toThrow(BranchFailedError);
    expect(() => joinBranches(parallel, failed, 0)).toThrow(
      '01-look-up: branch order failed: StepFailedError: no order',
    );
  });

  it('bounds the items of an inline Map by its history and payload limits', () => {
    const items = workflowScopes(fanOut).scopes[1]!;
    expect(inlineMapItemLimit(items, 10)).toBe(Math.floor((25_000 - 76) / 13));
    expect(inlineMapItemLimit(items, 100)).toBeLessThan(inlineMapItemLimit(items, 10));
  });
});
