/**
 * Studio in a real Chromium for a test file: a fresh state folder, Studio serving it, a page that
 * records the errors thrown in it; and what the execution page is read with (its status, its steps,
 * a step's panel, its name).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { type Studio, type StudioOptions, startStudio } from '../../src/cli/studio/server.ts';
import { type StateDirs, stateDirs } from '../../src/local/records/state-dirs.ts';
import { launchChromium } from './browser.ts';

export interface StudioInBrowser {
  dirs: StateDirs;
  studio: Studio;
  page: Page;
  /** The errors thrown in the page. */
  errors: string[];
  /** Close the browser and Studio, and delete the state folder. */
  close(): Promise<void>;
}

/**
 * Start Studio on a fresh state folder (`prefix` names it) and open `path` of it in Chromium;
 * `prepare` fills the folder first (executions, eval runs).
 */
export async function openStudio(
  prefix: string,
  path = '',
  options: Omit<StudioOptions, 'port' | 'dirs'> & { prepare?: (dirs: StateDirs) => void | Promise<void> } = {},
): Promise<StudioInBrowser> {
  const { prepare, ...studioOptions } = options;
  const root = mkdtempSync(join(tmpdir(), `stepwise-${prefix}-`));
  const dirs = stateDirs(root);
  await prepare?.(dirs);
  const studio = await startStudio({ port: 0, dirs, ...studioOptions });
  const browser = await launchChromium();
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${studio.url}${path}`);
  return {
    dirs,
    studio,
    page,
    errors,
    close: async () => {
      await browser.close();
      await studio.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The status badge of the open execution. */
export const statusBadge = (page: Page) => page.locator('h1 .status');

/** The steps list of the open execution (not the graph's nodes). */
export const stepButtons = (page: Page) => page.locator('ol.steps button');

/** Select a step of the open execution by the start of its line in the steps list; its panel. */
export async function selectStep(page: Page, step: string): Promise<ReturnType<Page['getByRole']>> {
  await stepButtons(page)
    .filter({ hasText: new RegExp(`^${step}( |$)`) })
    .first()
    .click();
  const panel = page.getByRole('article', { name: new RegExp(`\\d+\\. ${step}$`) });
  await panel.waitFor();
  return panel;
}

/** The name of the open execution, from the URL. */
export const executionName = (page: Page) =>
  decodeURIComponent(page.url().split('#/executions/')[1]!.split(/[?/]/)[0]!);

/** Wait until the open execution shows `status`. */
export async function untilStatus(page: Page, status: string, timeout = 90_000): Promise<void> {
  await expect
    .poll(
      () =>
        statusBadge(page)
          .textContent()
          .catch(() => null),
      { timeout },
    )
    .toBe(status);
}
