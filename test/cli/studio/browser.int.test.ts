/**
 * Stepwise Studio in a real Chromium (Debian's package, driven by playwright-core): open Studio
 * on the engine's fixture project, see the case-desk graph, run its valid sample and read step 03a's
 * model request, tokens and open_case call, fork from 02-look-up with the lookup saying `closed`
 * and see the fork hand off to 04, approve a paused checkpoint-review and see it finish,
 * import a deployed execution's history and fork it locally, open the execution a failed eval case
 * ran. Every view passes axe-core with no serious or critical finding, and every action of every
 * view is reached with Tab alone. The screenshots stay in `.stepwise/screenshots/`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Studio, startStudio } from '../../../src/cli/studio/server.ts';
import { loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { evalRunId, recordEvalRun } from '../../../src/evals/eval-runs.ts';
import { evalExecutionName } from '../../../src/evals/runner.ts';
import { writeLocalExecution } from '../../../src/local/records/history.ts';
import { stateDirs } from '../../../src/local/records/state-dirs.ts';
import { keyboardReach, launchChromium, screenshot, seriousAxeFindings, tabTo } from '../../support/browser.ts';
import { AWS_ARN, AWS_FIXTURE, recordedExecution } from '../../support/fixtures.ts';

/**
 * Studio's resumes, answered at once (the page opens the execution) but held until the test has seen the page show
 * it still paused: the page then shows the resumed steps arrive and the execution finish, however fast the machine.
 */
const resumes = vi.hoisted(() => {
  let open = () => {};
  let held = Promise.resolve();
  return {
    held: () => held,
    hold: () => void (held = new Promise<void>((resolve) => (open = resolve))),
    release: () => open(),
  };
});
vi.mock('../../../src/local/sessions/workflow-session.ts', async (original) => {
  const actual = await original<typeof import('../../../src/local/sessions/workflow-session.ts')>();
  const resumePaused: typeof actual.resumePaused = async (execution, resolution, options) => {
    options?.onStart?.(execution);
    await resumes.held();
    return actual.resumePaused(execution, resolution, options);
  };
  return { ...actual, resumePaused };
});

// The functions passed to page.evaluate run in the page; the project is compiled without the DOM library.
declare const document: any, window: any, MutationObserver: any;

let root: string;
let studio: Studio;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'stepwise-browser-'));
  const dirs = stateDirs(root);
  const cases = loadEvalCases(loadWorkflow('case-desk').dir).slice(0, 3);
  const steps = [{ name: '01-read-request', next: '02-look-up', decidedBy: 'offline' as const, fields: {} }];
  // The later run's failed case names the execution it ran, kept with the local ones.
  const failedRun = evalExecutionName(evalRunId(new Date('2025-03-14T11:00:00Z')), cases[1]!.scenario_id);
  const valid = recordedExecution('case-desk-valid');
  writeLocalExecution(
    { ...valid, name: failedRun, executionArn: valid.executionArn.replace(valid.name, failedRun) },
    dirs.executions,
  );
  for (const [at, verdicts] of [
    ['2025-03-14T10:00:00Z', [true, true, true]],
    ['2025-03-14T11:00:00Z', [true, false, true]],
  ] as const)
    recordEvalRun(
      'case-desk',
      {
        passed: verdicts.filter(Boolean).length,
        failed: verdicts.filter((v) => !v).length,
        total: 3,
        cases: cases.map((c, i) => ({
          id: c.scenario_id,
          passed: verdicts[i]!,
          failures: [],
          steps,
          ...(!verdicts[i] && { execution: failedRun }),
        })),
      },
      cases,
      'offline',
      dirs.evals,
      new Date(at),
    );
  studio = await startStudio({ port: 0, dirs });
  browser = await launchChromium();
  page = await browser.context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(studio.url);
}, 180_000);

afterAll(async () => {
  resumes.release();
  await browser?.close();
  await studio?.close();
  rmSync(root, { recursive: true, force: true });
});

/** axe-core on the view as shown: no serious or critical finding; and Tab reaches every action of it. */
async function accessible(view: string): Promise<void> {
  const findings = await seriousAxeFindings(page);
  expect(
    findings.map((f) => `${f.id} (${f.impact}): ${f.help} at ${f.targets.join(', ')}`),
    `axe on ${view}`,
  ).toEqual([]);
  const { actions, missed } = await keyboardReach(page);
  expect(actions.length, `actions of ${view}`).toBeGreaterThan(0);
  expect(missed, `actions of ${view} that Tab does not reach`).toEqual([]);
}

const statusBadge = () => page.locator('h1 .status');

/** Record the statuses the open execution shows from now on, starting with the one it shows now. */
async function watchStatus(): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { seenStatuses?: string[]; observer?: any };
    w.seenStatuses = [document.querySelector('h1 .status')?.textContent ?? '(none)'];
    w.observer?.disconnect();
    w.observer = new MutationObserver(() => {
      const now = document.querySelector('h1 .status')?.textContent ?? '(none)';
      if (w.seenStatuses!.at(-1) !== now) w.seenStatuses!.push(now);
    });
    w.observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

/** The statuses the open execution showed since {@link watchStatus}. */
const seenStatuses = () => page.evaluate(() => (window as unknown as { seenStatuses: string[] }).seenStatuses);

/** Wait until the open execution shows `status`, recording the statuses it showed on the way; the page is never reloaded. */
async function untilStatus(status: string, timeout = 90_000): Promise<string[]> {
  await watchStatus();
  await expect
    .poll(
      () =>
        statusBadge()
          .textContent()
          .catch(() => null),
      { timeout },
    )
    .toBe(status);
  return seenStatuses();
}

/** The steps list of the open execution (not the graph's nodes). */
const stepButtons = () => page.locator('ol.steps button');
/** A link of the navigation. */
const nav = (name: string) => page.getByRole('navigation', { name: 'Studio' }).getByRole('link', { name, exact: true });

/** The steps of the valid sample's execution, as the steps list shows them. */
const VALID_STEPS = [
  '01-read-request → 02-look-up',
  '02-look-up → 03a-open-case',
  '03a-open-case → 05-confirm',
  '05-confirm → DONE',
];

const executionName = () => decodeURIComponent(page.url().split('#/executions/')[1]!.split(/[?/]/)[0]!);

describe('Stepwise Studio in Chromium', () => {
  let valid: string;

  it('opens on the project and shows the case-desk graph, with Start, every step and its route, accessible', async () => {
    await expect.poll(() => page.getByRole('link', { name: 'case-desk' }).count()).toBe(1);
    await accessible('the workflows');
    await screenshot(page, 'workflows');
    await page.getByRole('link', { name: 'case-desk' }).click();
    const graph = page.getByRole('group', { name: /case-desk: the compiled state machine/ });
    await graph.waitFor();
    for (const state of [
      'Start',
      '01-read-request',
      '02-look-up',
      '02-look-up.route',
      '03a-open-case',
      '03b-not-found',
      '04-hand-off',
      'Done',
    ])
      expect(await graph.locator(`[data-state="${state}"]`).count(), state).toBe(1);
    await accessible('a workflow');
    await screenshot(page, 'workflow-graph');
  });

  it('runs the valid sample and opens its execution, which updates live', async () => {
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
    await page.getByRole('button', { name: 'Run sample valid.eml' }).click();
    await page.waitForURL(/#\/executions\/email-/);
    valid = executionName();
    await untilStatus('SUCCEEDED');
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
    expect(await stepButtons().allTextContents()).toEqual(VALID_STEPS);
  });

  it("reads step 03a's model request, its tokens and its open_case call", async () => {
    await stepButtons()
      .filter({ hasText: /^03a-open-case → / })
      .click();
    const panel = page.getByRole('article', { name: /03a-open-case/ });
    await panel.getByRole('heading', { name: 'Model request and response' }).waitFor();
    await expect
      .poll(() => panel.locator('details', { hasText: 'System prompt' }).locator('pre').first().textContent())
      .toContain('Call `open_case` once');
    expect(await panel.getByText(/^Call 1: tool_use/).count()).toBeGreaterThan(0);
    expect(await panel.locator('[data-testid="step-tokens"]').textContent()).toMatch(
      /^\d+ in \/ \d+ out, cache \d+ read \/ \d+ written, [1-9]\d* model calls$/,
    );
    const opened = panel.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'open_case' }) });
    expect(await opened.count()).toBe(1);
    expect(await opened.textContent()).toMatch(/"caseId": "CASE-[A-F0-9]{10}"/);
    expect(await opened.textContent()).toContain('"caseRef": "C-10001"');
    await screenshot(page, 'execution-03a');
    await accessible('an execution');
  });

  it('forks from 02-look-up with the lookup saying closed: the fork hands off to 04, linked to its parent and compared side by side', async () => {
    await stepButtons()
      .filter({ hasText: /^02-look-up → / })
      .click();
    await page.getByRole('link', { name: 'Fork from 02-look-up' }).click();
    const tools = page.getByLabel(/^Tool results of 02-look-up/);
    await expect.poll(() => tools.inputValue()).toContain('"status": "open"');
    await expect.poll(() => page.locator('#fork-input-check').textContent()).toBe('Matches the step input schema.');
    // An invalid edit is caught against the step's input schema before anything runs.
    const input = page.getByLabel(/^Step input of 02-look-up/);
    const recorded = await input.inputValue();
    await input.fill(recorded.replace(/"count": \d+/, '"count": "one"'));
    await expect.poll(() => page.locator('#fork-input-check').textContent()).toMatch(/^previous\.count: /);
    expect(await page.getByRole('button', { name: 'Run the fork' }).isDisabled()).toBe(true);
    await input.fill(recorded);
    await tools.fill((await tools.inputValue()).replace('"status": "open"', '"status": "closed"'));
    await expect.poll(() => page.locator('#fork-input-check').textContent()).toBe('Matches the step input schema.');
    await accessible('the fork form');
    await screenshot(page, 'fork-form');
    await page.getByRole('button', { name: 'Run the fork' }).click();
    await page.waitForURL(/-fork-/);
    await untilStatus('SUCCEEDED');
    expect(await stepButtons().allTextContents()).toEqual([
      '01-read-request → 02-look-up',
      '02-look-up → 04-hand-off',
      '04-hand-off → DONE',
    ]);
    expect(await page.locator('[data-state="04-hand-off"]').getAttribute('class')).toContain('visited');
    expect(await page.locator('[data-state="03a-open-case"]').getAttribute('class')).not.toContain('visited');
    await page.getByRole('link', { name: valid }).first().waitFor();
    await screenshot(page, 'fork-execution');
    await page.getByRole('link', { name: 'compare with its parent' }).click();
    await expect.poll(() => page.getByText(/The paths part at step 2\./).count()).toBe(1);
    await accessible('the diff');
    await screenshot(page, 'fork-diff');
  });

  it('approves a paused checkpoint-review from the UI and sees it finish, live', async () => {
    await nav('Workflows').click();
    await page.getByRole('link', { name: 'checkpoint-review' }).click();
    await page.getByRole('button', { name: 'Run sample checkpoint.json' }).click();
    await page.waitForURL(/#\/executions\//);
    const review = executionName();
    await untilStatus('PAUSED');
    const jobStatus = () =>
      page.evaluate(
        async (name) =>
          ((await (await fetch(`/api/jobs/${encodeURIComponent(name)}`)).json()) as { status?: string }).status,
        review,
      );
    // With checkpoints on, the review may pause again after a resume: approve until it finishes.
    const rounds: string[][] = [];
    for (let round = 1; round <= 4 && rounds.at(-1)?.at(-1) !== 'SUCCEEDED'; round++) {
      await nav('Pauses').click();
      const card = page.getByRole('article', { name: review });
      await card.getByRole('heading', { name: 'Required actions' }).waitFor();
      if (round === 1) {
        await accessible('the pauses');
        await screenshot(page, 'pauses');
      }
      await card.getByLabel(/^Output/).fill(JSON.stringify({ notes: `Checked by the reviewer (round ${round}).` }));
      await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
      resumes.hold();
      await card.getByRole('button', { name: `Approve ${review}` }).click();
      await page.waitForURL(new RegExp(`#/executions/${review}$`));
      // The approval is made; the resume waits until the page has shown the execution still paused.
      await expect.poll(() => statusBadge().textContent(), { timeout: 30_000 }).toBe('PAUSED');
      const before = await stepButtons().count();
      await watchStatus();
      resumes.release();
      await expect.poll(jobStatus, { timeout: 120_000 }).toBe('done');
      // The badge may still show the paused status of before the resume: wait for what the execution is now.
      const now = await page.evaluate(async (name) => {
        const response = await fetch(`/api/executions/${encodeURIComponent(name)}`);
        const detail = (await response.json()) as { pause?: unknown; record: { status: string } };
        return detail.pause ? 'PAUSED' : detail.record.status;
      }, review);
      expect(now).toMatch(/^(SUCCEEDED|PAUSED)$/);
      await expect.poll(() => statusBadge().textContent(), { timeout: 30_000 }).toBe(now);
      await expect.poll(() => stepButtons().count(), { timeout: 30_000 }).toBeGreaterThan(before);
      rounds.push(await seenStatuses());
    }
    // Each approval was made while the page showed the execution paused; the resumed steps came into the open page
    // (never reloaded) and the last resume ended succeeded there. A poll may catch the resume mid-way: RUNNING between.
    for (const [i, seen] of rounds.entries()) {
      expect(seen[0], `round ${i + 1}`).toBe('PAUSED');
      expect(
        seen.slice(1, -1).filter((status) => status !== 'RUNNING'),
        `round ${i + 1}`,
      ).toEqual([]);
    }
    expect(rounds.at(-1)!.at(-1)).toBe('SUCCEEDED');
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
    expect(
      await stepButtons()
        .filter({ hasText: /^03-record\.pause/ })
        .count(),
    ).toBeGreaterThan(0);
    await screenshot(page, 'checkpoint-approved');
  });

  it('opens an imported AWS execution history and forks it locally', async () => {
    await nav('Import').click();
    await page.getByLabel('History file (GetExecutionHistory JSON)').setInputFiles(AWS_FIXTURE);
    await expect.poll(() => page.getByLabel('or paste it').inputValue()).toContain('"ExecutionStarted"');
    await page.getByLabel(/^Execution ARN/).fill(AWS_ARN);
    await accessible('the import');
    await page.getByRole('button', { name: 'Import and open' }).click();
    await page.waitForURL(/#\/executions\/email-c2a9f0d8/);
    await untilStatus('SUCCEEDED');
    expect(await page.getByText(/imported from a file/).count()).toBe(1);
    await stepButtons()
      .filter({ hasText: /^03a-open-case → / })
      .click();
    expect(await page.locator('[data-testid="step-tokens"]').textContent()).toMatch(/^[1-9]\d* in \/ [1-9]\d* out/);
    await screenshot(page, 'imported-execution');
    await stepButtons()
      .filter({ hasText: /^02-look-up → / })
      .click();
    await page.getByRole('link', { name: 'Fork from 02-look-up' }).click();
    await expect.poll(() => page.locator('#fork-input-check').textContent()).toBe('Matches the step input schema.');
    await page.getByRole('button', { name: 'Run the fork' }).click();
    await page.waitForURL(/-fork-/);
    await untilStatus('SUCCEEDED');
    expect(await page.getByText(/· local ·/).count()).toBe(1);
    expect(await stepButtons().allTextContents()).toEqual(VALID_STEPS);
    await screenshot(page, 'imported-fork');
  });

  it('lists the executions with filters, and the eval runs with a diff and the execution of a failed case, accessibly', async () => {
    await nav('Executions').click();
    await page.getByRole('table').waitFor();
    await page.getByLabel('workflow').selectOption('checkpoint-review');
    await expect.poll(() => page.getByRole('table').getByRole('row').count()).toBe(2);
    await accessible('the executions');
    await screenshot(page, 'executions');
    await nav('Evals').click();
    await page.getByRole('button', { name: 'Compare the two runs of case-desk' }).click();
    await page.getByRole('heading', { name: 'Verdicts that changed' }).waitFor();
    await accessible('an eval diff');
    await nav('Evals').click();
    await page.getByRole('link', { name: '2025-03-14 11:00:00' }).click();
    await page.getByRole('table').waitFor();
    await accessible('an eval run');
    await screenshot(page, 'eval-run');
    // The failed case links to the execution it ran.
    await page.getByRole('link', { name: /^What ran: eval-2025-03-14T11-00-00\.000Z-/ }).click();
    await page.waitForURL(/#\/executions\/eval-2025-03-14T11-00-00\.000Z-/);
    await untilStatus('SUCCEEDED');
  });

  it('lets a keyboard-only user run a sample, read a step and start a fork', async () => {
    await page.goto(`${studio.url}#/workflows`);
    await tabTo(page, /^a:Workflows$/);
    await tabTo(page, /^a:.*case-desk/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'case-desk', level: 1 }).waitFor();
    await tabTo(page, /^button:Run sample valid\.eml$/);
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/executions\/email-/);
    await untilStatus('SUCCEEDED');
    await tabTo(page, /^button:03a-open-case/);
    await page.keyboard.press('Enter');
    await page.getByRole('article', { name: /03a-open-case/ }).waitFor();
    await tabTo(page, /^g\[button\]:02-look-up .*, code step/);
    await page.keyboard.press('Enter');
    await page.getByRole('article', { name: /02-look-up/ }).waitFor();
    await tabTo(page, /^a:Fork from 02-look-up$/);
    await page.keyboard.press('Enter');
    await tabTo(page, /^textarea:fork-tools$/);
    await expect.poll(() => page.getByLabel(/^Tool results of/).inputValue()).toContain('"open"');
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(JSON.stringify({ lookup_case: { ref: 'C-10001', status: 'not_found' } }));
    await expect.poll(() => page.locator('#fork-input-check').textContent()).toBe('Matches the step input schema.');
    await tabTo(page, /^button:Run the fork$/);
    await page.keyboard.press('Enter');
    await page.waitForURL(/-fork-/);
    await untilStatus('SUCCEEDED');
    expect(
      await stepButtons()
        .filter({ hasText: /^02-look-up → / })
        .textContent(),
    ).toBe('02-look-up → 03b-not-found');
  });

  it('threw no error in the page', () => {
    expect(errors).toEqual([]);
  });
});
