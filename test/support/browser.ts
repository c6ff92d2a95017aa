/**
 * A real Chromium for the Studio tests: Debian's `chromium` (no browser download) driven by
 * playwright-core, headless, with a fresh profile; screenshots kept under the repository's `.stepwise/screenshots/`;
 * axe-core run in the page; and keyboard helpers that move only with Tab.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';

// The functions passed to page.evaluate run in the page; the project is compiled without the DOM library.
declare const document: any, window: any, MutationObserver: any;
type HTMLElement = any;
type HTMLButtonElement = any;

export const CHROMIUM = '/usr/bin/chromium';
/**
 * Where the browser tests leave their screenshots (git-ignored): the repository's, whichever project the test runs
 * (the engine's tests run the fixture project).
 */
export const SCREENSHOTS_DIR = join(PACKAGE_ROOT, '.stepwise', 'screenshots');

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launch Chromium with a fresh profile; `close` also deletes the profile. */
export async function launchChromium(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`,
    );
  const profile = mkdtempSync(join(tmpdir(), 'stepwise-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1440, height: 1000 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Save a screenshot of the page as `.stepwise/screenshots/<name>.png`; returns its path. */
export async function screenshot(page: Page, name: string, fullPage = false): Promise<string> {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  const file = join(SCREENSHOTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One axe-core finding. */
export interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Run axe-core (WCAG 2.0/2.1 A and AA, and best practices) on the page as it is; returns the
 * serious and critical findings. axe is evaluated through the DevTools protocol, which the page's
 * CSP does not apply to.
 */
export async function seriousAxeFindings(page: Page): Promise<AxeFinding[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run: (
            ctx: unknown,
            opts: unknown,
          ) => Promise<{
            violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
          }>;
        };
      }
    ).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A description of the focused element: its tag, role and accessible-ish name. */
const describeFocus = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return '';
    const name = el.getAttribute('aria-label') ?? el.textContent?.trim().replace(/\s+/g, ' ').slice(0, 80) ?? '';
    return `${el.tagName.toLowerCase()}${el.getAttribute('role') ? `[${el.getAttribute('role')}]` : ''}:${el.id || name}`;
  });

/** Press Tab until the focused element's description matches (at most `limit` presses). @throws naming what Tab reached. */
export async function tabTo(page: Page, wanted: RegExp, limit = 400): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    const focus = await describeFocus(page);
    if (wanted.test(focus)) return;
    seen.push(focus);
  }
  throw new Error(`Tab never reached ${wanted} (reached: ${[...new Set(seen)].slice(0, 60).join(' | ')})`);
}

/**
 * Every action of the view (links, buttons, form fields, summaries, focusable graph nodes that
 * are visible and enabled) and the ones Tab reaches, going once around the page from the top.
 */
export async function keyboardReach(page: Page): Promise<{ actions: string[]; missed: string[] }> {
  const actions: string[] = await page.evaluate(() => {
    const all = [
      ...document.querySelectorAll('a[href], button, select, textarea, input, summary, [role="button"][tabindex]'),
    ];
    return all
      .filter(
        (el) =>
          !(el as HTMLButtonElement).disabled &&
          el.getClientRects().length > 0 &&
          !el.closest('details:not([open]) > :not(summary)'),
      )
      .map((el, i) => {
        el.dataset.reach = String(i);
        return String(i);
      });
  });
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.evaluate(() => window.scrollTo(0, 0));
  const reached = new Set<string>();
  for (let i = 0; i < actions.length * 2 + 20; i++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.reach ?? null);
    if (id === null) continue;
    if (reached.has(id) && reached.size >= actions.length) break;
    reached.add(id);
  }
  const missed = await page.evaluate(
    (ids: string[]) =>
      ids
        .map((id) => document.querySelector(`[data-reach="${id}"]`)!)
        .map(
          (el) => `${el.tagName.toLowerCase()}:${el.getAttribute('aria-label') ?? el.textContent?.trim().slice(0, 60)}`,
        ),
    actions.filter((id) => !reached.has(id)),
  );
  return { actions, missed };
}
