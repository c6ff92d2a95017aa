/**
 * The event step as a definition: the fixture loads and draws a wait with its deadline, and each
 * misuse (no key path, a key no step produces, no timeout route, an unknown route, a wait inside
 * items) is refused in one line naming the file and the field.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadWorkflowFrom } from '../../../src/definitions/workflow/loader.ts';
import { workflowToMermaid } from '../../../src/definitions/workflow/mermaid.ts';
import { FIXTURE_WORKFLOWS } from '../../fixtures/triage-plugin.ts';

const WORKFLOW = 'awaits-payment';
const STEP = 'steps/01-await-payment.md';
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** The one-line refusal of the fixture with `from` replaced by `to` in `file`. */
function refusal(from: string, to: string, file = STEP): string {
  const root = mkdtempSync(join(tmpdir(), 'stepwise-event-'));
  roots.push(root);
  cpSync(join(FIXTURE_WORKFLOWS, WORKFLOW), join(root, WORKFLOW), { recursive: true });
  const path = join(root, WORKFLOW, file);
  const text = readFileSync(path, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
  writeFileSync(path, text.replace(from, to));
  try {
    loadWorkflowFrom(join(root, WORKFLOW));
  } catch (e) {
    const message = (e as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    return message;
  }
  throw new Error(`${WORKFLOW} loaded`);
}

describe('event step definition', () => {
  it('loads, and draws the wait with its deadline and its timeout route', () => {
    const def = loadWorkflowFrom(join(FIXTURE_WORKFLOWS, WORKFLOW));
    expect(def.steps[0]!.event).toMatchObject({ key: 'input.orderId', match: 'order.id', output: 'payment' });
    const graph = workflowToMermaid(def);
    expect(graph).toContain(
      'state "01-await-payment (wait for PaymentReceived from shop.payments by input.orderId, up to 3d)" as s_01_await_payment',
    );
    expect(graph).toContain('s_01_await_payment --> s_03_chase : no event within 3d');
    expect(graph).toContain('s_01_await_payment --> s_02_confirm');
  });

  it('refuses a step without a key path', () => {
    expect(refusal('  key: input.orderId\n', '')).toMatch(/01-await-payment\.md.*key/);
  });

  it('refuses a key the input does not declare', () => {
    expect(refusal('key: input.orderId', 'key: input.order')).toMatch(
      /01-await-payment\.md.*event\.key.*the input schema has no "order"/,
    );
  });

  it('refuses a step without a timeout route', () => {
    expect(refusal('  onTimeout: 03-chase\n', '')).toMatch(/01-await-payment\.md.*onTimeout/);
  });

  it('refuses an unknown timeout route', () => {
    expect(refusal('onTimeout: 03-chase', 'onTimeout: 07-nowhere')).toMatch(
      /01-await-payment\.md.*event\.onTimeout.*unknown step "07-nowhere"/,
    );
  });

  it('refuses the event option on another kind of step', () => {
    expect(refusal('kind: event', 'kind: wait')).toMatch(/01-await-payment\.md.*only a event step has this option/);
  });
});
