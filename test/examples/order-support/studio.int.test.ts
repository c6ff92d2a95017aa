/**
 * The order-support example's constructs in Studio, in a real Chromium: three of its samples run from Studio, one
 * with its attachments as items, its lookups as branches and its ticket as a child execution, one waiting for the
 * customer's reply, one crossing the wait until a parcel's expected delivery. Each view is kept as a screenshot in
 * `.stepwise/screenshots/`. (The constructs themselves, on the engine's fixture workflows:
 * test/cli/studio/constructs.int.test.ts.)
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from '../../support/browser.ts';
import * as studioPage from '../../support/studio-browser.ts';

describe('Studio shows the constructs of the order-support example', () => {
  let example: studioPage.StudioInBrowser;
  let on: Page;

  beforeAll(async () => {
    example = await studioPage.openStudio('constructs-example');
    on = example.page;
  }, 180_000);

  afterAll(async () => {
    await example?.close();
  });

  /** Run a sample of order-support from its workflow page and open its execution. */
  async function runSample(sample: string, status: string): Promise<string> {
    await on.goto(`${example.studio.url}#/workflows/order-support`);
    await on.getByRole('button', { name: `Run sample ${sample}` }).click();
    await on.waitForURL(/#\/executions\/email-/);
    await studioPage.untilStatus(on, status, 150_000);
    return studioPage.executionName(on);
  }

  it('opens a damaged-mug email: its attachments as items, the lookups as branches, the ticket as a child', async () => {
    const parent = await runSample('damaged-mug.eml', 'SUCCEEDED');
    let panel = await studioPage.selectStep(on, '03-classify-attachments');
    const items = await panel.getByTestId('construct-map').locator('summary').allTextContents();
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((item) => /^Item \d+ ✓ succeeded/.test(item))).toBe(true);
    await screenshot(on, 'constructs-example-items');
    panel = await studioPage.selectStep(on, '05-look-up');
    expect(await panel.getByTestId('construct-parallel').locator('summary').allTextContents()).toEqual([
      'Branch order ✓ succeeded (ended at 06-look-up-order)',
      'Branch customer ✓ succeeded (ended at 07-look-up-customer)',
    ]);
    panel = await studioPage.selectStep(on, '14-open-ticket');
    const child = panel.getByTestId('child-execution');
    expect(await child.textContent()).toMatch(/^Runs workflow order-ticket as child execution \S+ \(succeeded\)\.$/);
    await screenshot(on, 'constructs-example-child-link');
    await child.getByRole('link').last().click();
    const back = on.getByTestId('started-by');
    await back.waitFor();
    expect(await back.textContent()).toBe(`Child execution, started by a workflow step of ${parent}`);
    expect(await on.locator('p.facts').textContent()).toContain('workflow order-ticket');
    await screenshot(on, 'constructs-example-child');
  }, 240_000);

  it('opens an email without its order number: the event step waits for the reply, with its key and deadline', async () => {
    await runSample('missing-order-number.eml', 'PAUSED');
    const panel = await studioPage.selectStep(on, '10-await-reply');
    const wait = await panel.getByTestId('event-wait').textContent();
    expect(wait).toMatch(/^AwaitsEmail Reply from stepwise\.emailKeyinput\.email\.messageId = ".+"Deadline1 day, at /);
    expect(await panel.getByTestId('event-outcome').textContent()).toBe('waiting for the event');
    await screenshot(on, 'constructs-example-event-waiting');
  }, 240_000);

  it('opens a parcel in transit: the wait step shows its deadline, the expected delivery, crossed', async () => {
    await runSample('parcel-in-transit.eml', 'SUCCEEDED');
    const panel = await studioPage.selectStep(on, '16-wait-for-delivery');
    expect(await panel.getByTestId('wait-deadline').textContent()).toBe(
      'Waitsuntil the time at data.order.expectedDeliveryDeadline2026-12-02 18:00:00 UTCCrossedyes: the wait ended and the workflow went on',
    );
    expect(await studioPage.stepButtons(on).allTextContents()).toContain('16-wait-for-delivery · deadline crossed');
    await screenshot(on, 'constructs-example-wait');
  }, 240_000);

  it('threw no error in the page', () => {
    expect(example.errors).toEqual([]);
  });
});
