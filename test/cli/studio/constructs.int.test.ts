/**
 * The workflow constructs in Studio, in a real Chromium: the fixture construct workflows run on the
 * local runtime (a map with a failed item, parallel branches with a failed one, a workflow step and
 * its child, a three-day wait and a wait until a timestamp, an event step resumed by an event and
 * one that timed out), then Studio shows each: the items and branches with their status and
 * results, the child linked both ways, the waits' deadlines, the awaited event and how the wait
 * ended; and the workflow graph draws the Map with its item chain and the Parallel with its
 * branches. Each view is kept as a screenshot in `.stepwise/screenshots/`.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import { sessionClock } from '../../../src/local/asl/waits.ts';
import { synthesize } from '../../../src/local/cloud/synth.ts';
import { LocalEventWaits } from '../../../src/local/sessions/event-waits.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { memoryValueStore } from '../../../src/runtime/offload.ts';
import {
  addConstructWorkflows,
  CONSTRUCTS_STACK,
  registerConstructWorkflows,
} from '../../fixtures/construct-workflows.ts';
import { addEventWorkflow, EVENT_STACK, EVENT_WORKFLOW, registerEventWorkflow } from '../../fixtures/event-workflow.ts';
import { FIXTURE_WORKFLOWS } from '../../fixtures/triage-plugin.ts';
import { keyboardReach, screenshot, seriousAxeFindings } from '../../support/browser.ts';
import {
  executionName,
  openStudio,
  type StudioInBrowser,
  selectStep,
  stepButtons,
  untilStatus,
} from '../../support/studio-browser.ts';

const START = new Date('2026-03-02T09:00:00.000Z');
const REMIND_AT = '2026-03-09T09:00:00.000Z';

let studio: StudioInBrowser;
let page: Page;
/** The executions run, by what they show. */
const runs: Record<'fanOut' | 'failedBranch' | 'parent' | 'reminder' | 'paid' | 'unpaid', string> = {} as never;

beforeAll(async () => {
  registerConstructWorkflows();
  registerEventWorkflow();
  const app = synthesize((a) => {
    addConstructWorkflows(a);
    addEventWorkflow(a);
  });
  studio = await openStudio('constructs', '', {
    workflows: { app, statemachines: FIXTURE_WORKFLOWS },
    prepare: async (dirs) => {
      const runtime = await LocalRuntime.create({
        app,
        historyDir: dirs.executions,
        pausesDir: dirs.pauses,
        retryDelayMs: 0,
        clock: sessionClock(START),
        extraEnv: { STATEMACHINES_DIR: FIXTURE_WORKFLOWS, MODEL_PROVIDER: 'offline', POWERTOOLS_LOG_LEVEL: 'SILENT' },
        services: { events: memoryEventLog(), values: memoryValueStore() },
      });
      const run = async (workflow: string, input: unknown) =>
        (await runtime.startExecution(`${CONSTRUCTS_STACK}-${workflow}`, input)).name;
      runs.fanOut = await run('fan-out', {
        attachments: ['a.pdf', 'b.jpg', 'broken', 'd.pdf'].map((name) => ({ name })),
      });
      runs.failedBranch = await run('lookups', { orderId: 'O-2', failOrder: true });
      runs.parent = await run('parent-call', { subject: 'refund' });
      runs.reminder = await run('reminder', { remindAt: REMIND_AT });
      const waits = new LocalEventWaits(runtime);
      const awaitPayment = (orderId: string) => runtime.startExecution(`${EVENT_STACK}-${EVENT_WORKFLOW}`, { orderId });
      const paid = await awaitPayment('A-1');
      runs.paid = paid.name;
      await waits.send({
        source: 'shop.payments',
        detailType: 'PaymentReceived',
        detail: { order: { id: 'A-1' }, amount: 42 },
      });
      const unpaid = await awaitPayment('B-2');
      runs.unpaid = unpaid.name;
      const late = new Date(Date.parse(unpaid.pause!.pausedAt) + 4 * 86_400_000);
      await waits.send({
        source: 'shop.payments',
        detailType: 'PaymentReceived',
        detail: { order: { id: 'B-2' } },
        time: late,
      });
    },
  });
  page = studio.page;
}, 180_000);

afterAll(async () => {
  await studio?.close();
});

/** Open an execution and select one of its steps by the start of its line in the steps list. */
async function openStep(execution: string, step: string): Promise<ReturnType<Page['getByRole']>> {
  await page.goto(`${studio.studio.url}#/executions/${encodeURIComponent(execution)}`);
  await untilStatus(page, 'SUCCEEDED');
  return selectStep(page, step);
}

describe('Studio shows the workflow constructs', () => {
  it('lists a map step’s items with their steps and results, the failed item with its error', async () => {
    const panel = await openStep(runs.fanOut, '01-classify-all');
    const items = panel.getByTestId('construct-map');
    expect(await items.locator('summary').allTextContents()).toEqual([
      'Item 0 ✓ succeeded (ended at 02-classify)',
      'Item 1 ✓ succeeded (ended at 02-classify)',
      'Item 2 ✗ failed: StepFailedError: cannot read broken',
      'Item 3 ✓ succeeded (ended at 02-classify)',
    ]);
    expect(await items.textContent()).toContain('4 items, 1 failed');
    // The failed item is open; another opens to its steps and result.
    await items.locator('summary').first().click();
    expect(await items.locator('li').first().textContent()).toContain('"label": "invoice"');
    const steps = await stepButtons(page).allTextContents();
    expect(steps.filter((s) => s.startsWith('02-classify'))).toHaveLength(4);
    expect(steps).toContain('02-classify ✗ StepFailedError · item 2 of 01-classify-all');
    expect(steps).toContain('01-classify-all → 03-summarize · 4 items, 1 failed');
    // On the graph, the Map holds its item chain.
    const graph = page.getByRole('group', { name: /fan-out: the path of/ });
    const map = graph.locator('[data-state="01-classify-all.map"]');
    await map.waitFor();
    expect(await map.locator('[data-lane="each item"] [data-state="02-classify"]').count()).toBe(1);
    expect(await map.locator('[data-state="02-classify"] .visits').textContent()).toBe('×4');
    expect((await seriousAxeFindings(page)).map((f) => `${f.id}: ${f.help}`)).toEqual([]);
    // The Map's name on the graph is a button; what it holds are buttons beside it, each reached with Tab.
    expect((await keyboardReach(page)).missed).toEqual([]);
    await screenshot(page, 'constructs-map-items');
  });

  it('names a parallel step’s branches with their status and outputs, the failed branch named', async () => {
    const panel = await openStep(runs.failedBranch, '01-look-up');
    const branches = panel.getByTestId('construct-parallel');
    expect(await branches.locator('summary').allTextContents()).toEqual([
      'Branch customer ✓ succeeded (ended at 02-customer)',
      'Branch order ✗ failed: StepFailedError: order O-2 not found',
    ]);
    await branches.locator('summary').first().click();
    expect(await branches.locator('li').first().textContent()).toContain('"name": "Ada"');
    expect(await panel.locator('.facts-list').textContent()).toContain(
      'ErrorBranchFailedError: 01-look-up: branch order failed: StepFailedError: order O-2 not found',
    );
    const graph = page.getByRole('group', { name: /lookups: the path of/ });
    const parallel = graph.locator('[data-state="01-look-up.branches"]');
    await parallel.waitFor();
    expect(await parallel.locator('[data-lane="branch customer"] [data-state="02-customer"]').count()).toBe(1);
    expect(await parallel.locator('[data-lane="branch order"] [data-state="05-shipment"]').count()).toBe(1);
    await screenshot(page, 'constructs-parallel-branches');
  });

  it('links a workflow step to its child execution, and the child back to its parent', async () => {
    const panel = await openStep(runs.parent, '01-open-ticket');
    const child = panel.getByTestId('child-execution');
    expect(await child.textContent()).toMatch(/^Runs workflow child-ticket as child execution [\w-]+ \(succeeded\)\.$/);
    await screenshot(page, 'constructs-workflow-parent');
    const link = child.getByRole('link', { name: /^[0-9a-f-]{36}$/ });
    const childName = (await link.textContent())!;
    await link.click();
    await page.waitForURL(new RegExp(`#/executions/${childName}$`));
    const back = page.getByTestId('started-by');
    await back.waitFor();
    expect(executionName(page)).toBe(childName);
    expect(await page.locator('p.facts').textContent()).toContain('workflow child-ticket');
    expect(await back.textContent()).toBe(`Child execution, started by a workflow step of ${runs.parent}`);
    await screenshot(page, 'constructs-workflow-child');
    await back.getByRole('link', { name: runs.parent }).click();
    await page.waitForURL(new RegExp(`#/executions/${runs.parent}$`));
    await untilStatus(page, 'SUCCEEDED');
  });

  it('shows a wait’s deadline, a duration or a timestamp of the state, and that it was crossed', async () => {
    let panel = await openStep(runs.reminder, '01-three-days');
    let wait = panel.getByTestId('wait-deadline');
    expect(await wait.textContent()).toMatch(
      /^Waits3 days \(259200 s\)Deadline\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTCCrossedyes: the wait ended/,
    );
    expect(await stepButtons(page).allTextContents()).toContain('01-three-days · deadline crossed');
    await screenshot(page, 'constructs-wait-duration');
    panel = await openStep(runs.reminder, '02-until');
    wait = panel.getByTestId('wait-deadline');
    expect(await wait.textContent()).toBe(
      'Waitsuntil the time at input.remindAtDeadline2026-03-09 09:00:00 UTCCrossedyes: the wait ended and the workflow went on',
    );
  });

  it('shows what an event step awaits, its deadline, and how it ended: resumed by an event, or timed out', async () => {
    let panel = await openStep(runs.paid, '01-await-payment');
    expect(await panel.getByTestId('event-wait').textContent()).toMatch(
      /^AwaitsPaymentReceived from shop\.paymentsKeyinput\.orderId = "A-1"Deadline3 days, at [\d-]+ [\d:]+ UTC; then 03-chaseOutcomeresumed by an event$/,
    );
    expect(await panel.getByLabel('The detail of the event that resumed it').textContent()).toContain('"amount": 42');
    await screenshot(page, 'constructs-event-resumed');
    panel = await openStep(runs.unpaid, '01-await-payment');
    expect(await panel.getByTestId('event-outcome').textContent()).toBe(
      'timed out: no matching event before the deadline',
    );
    expect((await stepButtons(page).allTextContents()).map((s) => s.split(' ')[0])).toEqual([
      '01-await-payment',
      '03-chase',
    ]);
    await screenshot(page, 'constructs-event-timed-out');
  });

  it('draws the Map with its item chain and the Parallel with its branches on the workflow page', async () => {
    await page.goto(`${studio.studio.url}#/workflows/lookups`);
    const graph = page.getByRole('group', { name: /lookups: the compiled state machine/ });
    const parallel = graph.locator('[data-state="01-look-up.branches"]');
    await parallel.waitFor();
    expect(
      await parallel.locator('[data-lane]').evaluateAll((lanes) => lanes.map((l) => l.getAttribute('data-lane'))),
    ).toEqual(['branch customer', 'branch order']);
    expect(await parallel.locator('[data-state="03-order"]').count()).toBe(1);
    await screenshot(page, 'constructs-workflow-graph-parallel');
    await page.goto(`${studio.studio.url}#/workflows/fan-out`);
    const fanOut = page.getByRole('group', { name: /fan-out: the compiled state machine/ });
    await fanOut.waitFor();
    // The page shows the previous workflow's graph until this one has loaded.
    await fanOut
      .locator('[data-state="01-classify-all.map"] [data-lane="each item"] [data-state="02-classify"]')
      .waitFor();
    await screenshot(page, 'constructs-workflow-graph-map');
  });

  it('threw no error in the page', () => {
    expect(studio.errors).toEqual([]);
  });
});
