/**
 * The executions list: what an execution was about and how it ended, search over inputs, outputs
 * and replies, filters and order; refused mail as its own kind of row; and the state folder read
 * as regular files only (a symlink and a FIFO are refused without blocking).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { ManifestSchema } from '../../../src/definitions/workflow/schema.ts';
import { aboutOf, ExecutionIndex, outcomeOf } from '../../../src/local/records/execution-list.ts';
import {
  readLocalExecution,
  readStoredExecutionAsync,
  writeLocalExecution,
} from '../../../src/local/records/history.ts';
import { stateDirs } from '../../../src/local/records/state-dirs.ts';
import { recordedExecution } from '../../support/fixtures.ts';

const desk = loadWorkflow('case-desk');
const valid = recordedExecution('case-desk-valid');
let root: string;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function project() {
  root = mkdtempSync(join(tmpdir(), 'stepwise-list-'));
  const dirs = stateDirs(root);
  for (const dir of [dirs.executions, dirs.imports, dirs.refused]) mkdirSync(dir, { recursive: true });
  const index = new ExecutionIndex(dirs, (w) => (w === 'case-desk' ? desk : undefined));
  return { dirs, index };
}

describe('what an execution was about and how it ended', () => {
  it('an email execution is named by its subject and sender, and ends in the last step it ran', () => {
    const email = (valid.input as { email: { subject: string; from: string } }).email;
    expect(aboutOf(valid.input, desk)).toEqual({ subject: email.subject, from: email.from });
    expect(outcomeOf(valid, desk)).toBe('05-confirm');
  });

  it('a declared outcome field and identifying paths win over the defaults', () => {
    const def = {
      ...desk,
      manifest: { ...desk.manifest, summary: { identify: ['email.from'], outcome: ['caseId'] } },
    };
    expect(aboutOf(valid.input, def)).toEqual({ from: (valid.input as { email: { from: string } }).email.from });
    expect(outcomeOf(valid, def)).toMatch(/^caseId: CASE-\S+/);
  });

  it('a workflow without email is named by its first input fields; a failure ends in its error', () => {
    expect(aboutOf({ customer: 'Ada', order: 7, note: 'x', extra: 'y' }, undefined)).toEqual({
      customer: 'Ada',
      order: '7',
      note: 'x',
    });
    expect(outcomeOf({ ...valid, status: 'FAILED', error: { Error: 'States.Timeout' } }, desk)).toBe('States.Timeout');
  });

  it('the manifest accepts the declaration and refuses a path that is not one', () => {
    const base = { name: 'w', description: 'd', version: '1', entry: 'a', fallback: 'a', model: { id: 'm' } };
    expect(ManifestSchema.parse({ ...base, summary: { outcome: ['caseId'] } }).summary.outcome).toEqual(['caseId']);
    expect(ManifestSchema.safeParse({ ...base, summary: { identify: ['a..b'] } }).success).toBe(false);
  });
});

describe('the list', () => {
  it('searches inputs, outputs and replies, filters by step, outcome, error and time, and sorts', async () => {
    const { dirs, index } = project();
    const at = (n: number) => new Date(Date.UTC(2026, 0, n));
    writeLocalExecution({ ...valid, name: 'older', startDate: at(1), stopDate: at(2) }, dirs.executions);
    writeLocalExecution({ ...valid, name: 'newer', startDate: at(5), stopDate: at(5) }, dirs.executions);
    writeLocalExecution(
      { ...valid, name: 'failed', status: 'FAILED', error: { Error: 'Boom' }, startDate: at(3) },
      dirs.executions,
    );
    const subject = (valid.input as { email: { subject: string } }).email.subject;
    const names = async (q: Parameters<ExecutionIndex['list']>[0]) =>
      (await index.list(q)).executions.map((e) => e.name);
    expect(await names({})).toEqual(['newer', 'failed', 'older']);
    expect(await names({ q: subject.split(' ')[0]!.toUpperCase(), sort: 'name', order: 'asc' })).toEqual([
      'failed',
      'newer',
      'older',
    ]);
    expect(await names({ q: 'no such words anywhere' })).toEqual([]);
    expect(await names({ error: 'any' })).toEqual(['failed']);
    expect(await names({ outcome: '05-confirm', until: at(3).toISOString() })).toEqual(['older']);
    expect(await names({ step: '03a-open-case', since: at(4).toISOString() })).toEqual(['newer']);
    expect(await names({ step: '04-hand-off' })).toEqual([]);
    expect(await names({ sort: 'duration', order: 'desc', status: 'SUCCEEDED' })).toEqual(['older', 'newer']);
  });

  it('a new, changed or deleted record shows on the next list', async () => {
    const { dirs, index } = project();
    writeLocalExecution({ ...valid, name: 'kept' }, dirs.executions);
    writeLocalExecution({ ...valid, name: 'changed', status: 'RUNNING', stopDate: undefined }, dirs.executions);
    const rows = async (q = {}) => Object.fromEntries((await index.list(q)).executions.map((e) => [e.name, e.status]));
    expect(await rows()).toEqual({ kept: 'SUCCEEDED', changed: 'RUNNING' });
    writeLocalExecution({ ...valid, name: 'added' }, dirs.executions);
    // Rewritten in place (as a resumed execution is), straight after the list read it.
    writeLocalExecution(
      { ...valid, name: 'changed', status: 'FAILED', error: { Error: 'Rewritten' } },
      dirs.executions,
    );
    rmSync(join(dirs.executions, 'kept.json'));
    expect(await rows()).toEqual({ added: 'SUCCEEDED', changed: 'FAILED' });
    expect(await rows({ q: 'rewritten' })).toEqual({ changed: 'FAILED' });
    // A paused execution is listed as such, and as it ran on once its pause is gone.
    expect(await rows({ status: 'PAUSED' })).toEqual({});
    expect((await index.list({}, new Set(['added']))).executions.find((e) => e.name === 'added')?.status).toBe(
      'PAUSED',
    );
    expect((await rows()).added).toBe('SUCCEEDED');
  });

  it('shows refused mail as its own kind of row, with the reason', async () => {
    const { dirs, index } = project();
    writeFileSync(
      join(dirs.refused, 'email-abc.json'),
      JSON.stringify({
        kind: 'refused',
        name: 'email-abc',
        workflow: 'case-desk',
        at: '2026-01-01T00:00:00.000Z',
        emailId: 'abc',
        reason: 'auto_submitted',
        detail: 'Auto-Submitted: auto-replied',
        from: 'bot@example.com',
      }),
    );
    const [row] = (await index.list({ kind: 'refused' })).executions;
    expect(row).toMatchObject({
      kind: 'refused',
      status: 'REFUSED',
      outcome: 'refused: auto_submitted',
      about: { from: 'bot@example.com' },
    });
    expect((await index.list({ q: 'auto-replied' })).total).toBe(1);
  });

  it('reads only regular files: a symlink and a FIFO are skipped as unreadable, and nothing blocks', async () => {
    const { dirs, index } = project();
    writeLocalExecution({ ...valid, name: 'real' }, dirs.executions);
    const outside = join(root, 'outside.json');
    cpSync(join(dirs.executions, 'real.json'), outside);
    symlinkSync(outside, join(dirs.executions, 'linked.json'));
    execFileSync('mkfifo', [join(dirs.executions, 'pipe.json')]);
    const list = await index.list({});
    expect(list.executions.map((e) => e.name)).toEqual(['real']);
    expect(list.unreadable).toBe(2);
    expect(() => readLocalExecution('linked', dirs.executions)).toThrow(/not a regular file/);
    expect(() => readLocalExecution('pipe', dirs.executions)).toThrow(/not a regular file/);
    await expect(readStoredExecutionAsync('pipe', dirs)).rejects.toThrow(/not a regular file/);
  });

  it('an imported execution with the name of a local one is reachable by its folder', async () => {
    const { dirs, index } = project();
    writeLocalExecution({ ...valid, name: 'same', status: 'FAILED', error: { Error: 'Local' } }, dirs.executions);
    writeLocalExecution({ ...valid, name: 'same' }, dirs.imports);
    expect((await readStoredExecutionAsync('same', dirs)).record.status).toBe('FAILED');
    const imported = await readStoredExecutionAsync('same', dirs, 'imported');
    expect([imported.source, imported.record.status]).toEqual(['imported', 'SUCCEEDED']);
    expect((await index.list({})).executions.map((e) => e.source).sort()).toEqual(['imported', 'local']);
  });
});
