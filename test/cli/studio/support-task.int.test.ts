/**
 * A support engineer's task in Studio, in a real Chromium: several case-desk emails arrive (the
 * samples, one of them refused by the ingress), the engineer finds the one that was handed off by
 * searching its subject, opens it, reads the rule that decided its route, forks it at
 * `01-read-request` with the model's answer pinned to `02-look-up` and a case reference, and
 * reads in the compare view what the fork changed and the path it took. Each view is kept as a
 * screenshot in `.stepwise/screenshots/`.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from '../../support/browser.ts';
import { FIXTURE_STATEMACHINES } from '../../support/fixture-project.ts';
import * as studioPage from '../../support/studio-browser.ts';

let studio: studioPage.StudioInBrowser;
let page: Page;

beforeAll(async () => {
  studio = await studioPage.openStudio('support', '#/workflows/case-desk');
  page = studio.page;
}, 180_000);

afterAll(async () => {
  await studio?.close();
});

const stepButtons = () => studioPage.stepButtons(page);
const nav = (name: string) => page.getByRole('navigation', { name: 'Studio' }).getByRole('link', { name, exact: true });
const executionName = () => studioPage.executionName(page);
const rows = () => page.getByRole('table').locator('tbody tr');
const untilStatus = (status: string) => studioPage.untilStatus(page, status);

/** Run one sample from the workflow's page and wait for its execution to end. */
async function runSample(sample: string): Promise<string> {
  await page.goto(`${studio.studio.url}#/workflows/case-desk`);
  await page.getByRole('button', { name: `Run sample ${sample}` }).click();
  await page.waitForURL(/#\/executions\/email-/);
  await untilStatus('SUCCEEDED');
  return executionName();
}

describe('Studio: find a handed-off email, see why, and fork it with the model’s answer pinned', () => {
  let handedOff: string;
  let fork: string;

  it('runs several case emails; the auto-reply is refused by the ingress and listed with its reason', async () => {
    await runSample('valid.eml');
    // A mail of one's own, uploaded: it goes through the ingress like a sample.
    await page.goto(`${studio.studio.url}#/workflows/case-desk`);
    await page
      .getByLabel(/^Upload an \.eml/)
      .setInputFiles(join(FIXTURE_STATEMACHINES, 'case-desk/samples/missing-ref.eml'));
    await page.getByRole('button', { name: 'Run missing-ref.eml' }).click();
    await page.waitForURL(/#\/executions\/email-/);
    await untilStatus('SUCCEEDED');
    expect((await stepButtons().allTextContents())[0]).toBe('01-read-request → 03c-ask-ref');
    handedOff = await runSample('out-of-scope.eml');
    expect(await page.getByText('Loading Stepwise Studio…').count()).toBe(0);
    await page.goto(`${studio.studio.url}#/workflows/case-desk`);
    await page.getByRole('button', { name: 'Run sample auto-reply.eml' }).click();
    await expect.poll(() => page.getByText(/^REJECTED: /).count(), { timeout: 90_000 }).toBe(1);
    await nav('Executions').click();
    await expect.poll(() => rows().count()).toBe(4);
    const refused = rows().filter({ hasText: /refused: / });
    expect(await refused.count()).toBe(1);
    expect(await refused.getByRole('link').count()).toBe(0);
    await screenshot(page, 'support-executions');
  }, 400_000);

  it('finds the handed-off email by searching its subject and opens it', async () => {
    await page.getByRole('searchbox', { name: /Search inputs, outputs and replies/ }).fill('Shipping to Norway');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().textContent()).toContain('Shipping to Norway?');
    expect(await rows().first().textContent()).toContain('04-hand-off');
    await screenshot(page, 'support-search');
    await rows()
      .first()
      .getByRole('link', { name: /Shipping to Norway\?/ })
      .click();
    await page.waitForURL(/#\/executions\/email-/);
    expect(executionName()).toBe(handedOff);
    await untilStatus('SUCCEEDED');
    expect(await stepButtons().allTextContents()).toEqual(['01-read-request → 04-hand-off', '04-hand-off → DONE']);
  });

  it('reads the rule of the offline stand-in that decided the route', async () => {
    await stepButtons()
      .filter({ hasText: /^01-read-request → / })
      .click();
    const panel = page.getByRole('article', { name: /01-read-request/ });
    const why = panel.getByTestId('why-route');
    await why.waitFor();
    // The rule and the word of the email that matched it.
    expect(await why.textContent()).toMatch(/^rule \d+ of \d+: keyword "discount"/);
    expect(await panel.getByText(/^next 04-hand-off, decided by offline/).count()).toBe(1);
    await screenshot(page, 'support-why-route');
  });

  it('forks at 01-read-request with the answer pinned to 02-look-up and a case reference', async () => {
    await page.getByRole('link', { name: 'Fork from 01-read-request' }).click();
    const pin = page.getByRole('checkbox', { name: /Pin the model's answer/ });
    await pin.check();
    await page.getByRole('combobox', { name: 'Route' }).selectOption('02-look-up');
    await page
      .getByLabel('Its outputs')
      .fill(JSON.stringify({ caseRef: 'C-10001', summary: 'Asks about shipping to Norway.' }));
    await expect.poll(() => page.locator('#fork-answer-fields-check').textContent()).toBe('Valid JSON.');
    await screenshot(page, 'support-fork-form');
    await page.getByRole('button', { name: 'Run the fork' }).click();
    await page.waitForURL(/-fork-/);
    fork = executionName();
    await untilStatus('SUCCEEDED');
    const path = await stepButtons().allTextContents();
    expect(path[0]).toBe('01-read-request → 02-look-up');
    expect(path[1]).toBe('02-look-up → 03a-open-case');
    // Its duration is its own, from the step it re-ran; the header counts the rows listed.
    expect(await page.locator('p.facts').textContent()).toMatch(
      new RegExp(` s since the fork · ${path.length} steps · `),
    );
    await screenshot(page, 'support-fork-execution');
  }, 180_000);

  it('compares the fork with its parent: the pinned answer is named, and so is the new path', async () => {
    await page.getByRole('link', { name: 'compare with its parent' }).click();
    await page.getByRole('heading', { name: 'What the fork changed' }).waitFor();
    const changes = await page.getByTestId('fork-changes').textContent();
    expect(changes).toContain('answer.next: "04-hand-off" → "02-look-up"');
    expect(changes).toContain('answer.fields.caseRef: "C-10001"');
    await expect.poll(() => page.getByText(/The paths part at step 1\./).count()).toBe(1);
    const paths = await page.getByTestId('paths').textContent();
    expect(paths).toContain(`Path of ${handedOff}: 01-read-request → 04-hand-off`);
    expect(paths).toContain(`Path of ${fork}: 01-read-request → 02-look-up → 03a-open-case`);
    await screenshot(page, 'support-fork-diff');
  });

  it('threw no error in the page', () => {
    expect(studio.errors).toEqual([]);
  });
});
