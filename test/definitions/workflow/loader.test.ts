import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DefinitionError } from '../../../src/core/errors.ts';
import { loadWorkflow, loadWorkflowFrom } from '../../../src/definitions/workflow/loader.ts';

const MANIFEST = `name: demo
description: A two-step demo.
version: 1.0.0
entry: a-first
fallback: z-fallback
model: { id: test-model }
tools: [lookup]
`;

function step(name: string, next: string[], extra = '', body = 'Do the thing.'): string {
  return `---\nname: ${name}\ndescription: Step ${name}.\nversion: 1.0.0\nkind: llm\nnext: [${next.join(', ')}]\n${extra}---\n${body}\n`;
}

const roots: string[] = [];
function workflow(files: Record<string, string>, manifest = MANIFEST): string {
  const root = mkdtempSync(join(tmpdir(), 'stepwise-wf-'));
  roots.push(root);
  const dir = join(root, 'demo');
  mkdirSync(join(dir, 'steps'), { recursive: true });
  writeFileSync(join(dir, 'workflow.yaml'), manifest);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'steps', name), text);
  return dir;
}
const good = () => ({
  'a-first.md': step('a-first', ['b-second', 'DONE']),
  'b-second.md': step('b-second', ['DONE'], 'tools: [lookup]\n'),
  'z-fallback.md': step('z-fallback', ['DONE']),
});

function loadError(dir: string): DefinitionError {
  try {
    loadWorkflowFrom(dir);
  } catch (e) {
    expect(e).toBeInstanceOf(DefinitionError);
    return e as DefinitionError;
  }
  throw new Error('expected the definition to be rejected');
}

afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

describe('workflow loader', () => {
  it('loads a valid workflow with defaults applied', () => {
    const def = loadWorkflowFrom(workflow(good()));
    expect(def.manifest.maxSteps).toBe(10);
    expect(def.manifest.retry.maxAttempts).toBe(3);
    expect(def.steps.map((s) => s.name)).toEqual(['a-first', 'b-second', 'z-fallback']);
    expect(def.steps[0]!.instruction).toBe('Do the thing.');
  });

  it('rejects an edge to an unknown step, naming the file and the field', () => {
    const e = loadError(workflow({ ...good(), 'a-first.md': step('a-first', ['b-second', 'c-missing']) }));
    expect(e.file).toMatch(/a-first\.md$/);
    expect(e.field).toBe('next.1');
    expect(e.message).toContain('unknown step "c-missing"');
    expect(e.message).not.toContain('did you mean');
  });

  it('says which step a misspelt edge meant', () => {
    const e = loadError(workflow({ ...good(), 'a-first.md': step('a-first', ['b-secnod']) }));
    expect(e.field).toBe('next.0');
    expect(e.message).toContain('unknown step "b-secnod": did you mean "b-second"?');
  });

  it('rejects an unreachable step', () => {
    const e = loadError(workflow({ ...good(), 'c-orphan.md': step('c-orphan', ['DONE']) }));
    expect(e.file).toMatch(/c-orphan\.md$/);
    expect(e.message).toContain('unreachable');
  });

  it('rejects a step from which DONE can never be reached', () => {
    const e = loadError(
      workflow({
        ...good(),
        'a-first.md': step('a-first', ['b-second', 'c-loop']),
        'c-loop.md': step('c-loop', ['d-loop']),
        'd-loop.md': step('d-loop', ['c-loop']),
      }),
    );
    expect(e.field).toBe('next');
    expect(e.message).toMatch(/no route from "c-loop" ever reaches DONE/);
  });

  it('rejects duplicate step names', () => {
    const e = loadError(workflow({ ...good(), 'b-second.md': step('a-first', ['DONE']) }));
    expect(e.field).toBe('name');
  });

  it('rejects a tool the manifest does not declare', () => {
    const e = loadError(
      workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], 'tools: [launch_missiles]\n') }),
    );
    expect(e.file).toMatch(/b-second\.md$/);
    expect(e.field).toBe('tools.0');
    expect(e.message).toContain('unknown tool "launch_missiles"');
    const typo = loadError(workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], 'tools: [lookpu]\n') }));
    expect(typo.message).toContain('unknown tool "lookpu": did you mean "lookup"?');
  });

  it('rejects a required tool the step may not call', () => {
    const e = loadError(
      workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], 'tools: [lookup]\nrequires: [send_email]\n') }),
    );
    expect(e.field).toBe('requires.0');
    expect(e.message).toContain('"send_email" is not one of the step\'s tools');
  });

  it('rejects an output taken from a tool the step may not call, or a malformed `from`', () => {
    const outputs = (from: string) =>
      `tools: [lookup]\noutputs:\n  ticketId: { type: string, description: The id., from: ${from} }\n`;
    expect(
      loadWorkflowFrom(workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], outputs('lookup.ticketId')) }))
        .steps[1]!.outputs.ticketId!.from,
    ).toBe('lookup.ticketId');

    const e = loadError(
      workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], outputs('create_ticket.ticketId')) }),
    );
    expect(e.file).toMatch(/b-second\.md$/);
    expect(e.field).toBe('outputs.ticketId.from');
    expect(e.message).toContain('"create_ticket" is not one of the step\'s tools (lookup)');

    const malformed = loadError(workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], outputs('lookup')) }));
    expect(malformed.field).toBe('outputs.ticketId.from');
    expect(malformed.message).toContain('<tool>.<resultKey>');
  });

  it('rejects an enum output that is not a string, and routes that miss a value or name an undeclared edge', () => {
    const decision = (type: string, routes: string) =>
      `outputs:\n  action: { type: ${type}, enum: [again, stop], description: The decision.${routes} }\n`;
    const withFirst = (extra: string) =>
      workflow({ ...good(), 'a-first.md': step('a-first', ['b-second', 'DONE'], extra) });
    const tied = loadWorkflowFrom(withFirst(decision('string', ', routes: { again: [b-second], stop: [DONE] }')));
    expect(tied.steps[0]!.outputs.action!.routes).toEqual({ again: ['b-second'], stop: ['DONE'] });

    expect(loadError(withFirst(decision('number', ''))).field).toBe('outputs.action.enum');
    const missing = loadError(withFirst(decision('string', ', routes: { again: [b-second], halt: [DONE] }')));
    expect(missing.field).toBe('outputs.action.routes');
    expect(missing.message).toContain('missing stop, unknown halt');
    const undeclared = loadError(withFirst(decision('string', ', routes: { again: [z-fallback], stop: [DONE] }')));
    expect(undeclared.field).toBe('outputs.action.routes.again');
    expect(undeclared.message).toContain('"z-fallback" is not a declared edge');
    const noEnum = loadError(
      withFirst('outputs:\n  action: { type: string, description: D., routes: { again: [b-second] } }\n'),
    );
    expect(noEnum.field).toBe('outputs.action.routes');
  });

  it('applies the new defaults: api trigger, no local env, steps read untrusted input at temperature 0 and bind nothing', () => {
    const def = loadWorkflowFrom(workflow(good()));
    expect(def.manifest.triggers).toEqual([{ type: 'api' }]);
    expect(def.manifest.local).toEqual({ env: {} });
    expect(def.manifest.input).toBeUndefined();
    for (const s of def.steps) expect([s.readsUntrusted, s.temperature, s.bind]).toEqual([true, 0, {}]);
    const tuned = loadWorkflowFrom(
      workflow({
        ...good(),
        'a-first.md': step('a-first', ['b-second', 'DONE'], 'readsUntrusted: false\ntemperature: 0.7\n'),
      }),
    );
    expect(tuned.steps[0]).toMatchObject({ readsUntrusted: false, temperature: 0.7 });
  });

  it('binds tool arguments of an LLM step from data.* or input.*, and only for its own tools', () => {
    const bound = (bind: string, kind = '') => `tools: [lookup]\n${kind}bind:\n  lookup:\n    id: ${bind}\n`;
    const def = loadWorkflowFrom(
      workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], bound('data.record.id')) }),
    );
    expect(def.steps[1]!.bind).toEqual({ lookup: { id: 'data.record.id' } });
    expect(
      loadWorkflowFrom(workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], bound('input.customer.id')) }))
        .steps[1]!.bind.lookup,
    ).toEqual({ id: 'input.customer.id' });

    const badPath = loadError(workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], bound('state.id')) }));
    expect(badPath.field).toBe('bind.lookup.id');
    expect(badPath.message).toContain('data.<field> or input.<field>');

    const notItsTool = loadError(
      workflow({
        ...good(),
        'a-first.md': step('a-first', ['b-second', 'DONE'], 'bind:\n  lookup:\n    id: data.id\n'),
      }),
    );
    expect(notItsTool.field).toBe('bind.lookup');
    expect(notItsTool.message).toContain('"lookup" is not one of the step\'s tools');

    const code = `---\nname: b-second\ndescription: Step b.\nversion: 1.0.0\nkind: code\nhandler: act\nnext: [DONE]\n${bound('data.id')}---\n`;
    const onCode = loadError(workflow({ ...good(), 'b-second.md': code }));
    expect(onCode.field).toBe('bind.lookup');
    expect(onCode.message).toContain('only LLM steps bind tool arguments');
  });

  it('takes triggers, an input schema with untrusted fields, and local env from the manifest', () => {
    const manifest = `${MANIFEST}triggers:\n  - type: eventbridge\n    pattern: { source: [shop] }\n  - type: api\ninput:\n  schema: { type: object, required: [orderId], properties: { orderId: { type: string } } }\n  untrusted: [note]\nlocal:\n  env: { LOOKUP_FILE: records.json }\n`;
    const def = loadWorkflowFrom(workflow(good(), manifest));
    expect(def.manifest.triggers).toEqual([
      { type: 'eventbridge', bus: 'default', pattern: { source: ['shop'] } },
      { type: 'api' },
    ]);
    expect(def.manifest.input).toMatchObject({ untrusted: ['note'] });
    expect(def.manifest.local.env).toEqual({ LOOKUP_FILE: 'records.json' });

    const emailWithInput = loadError(
      workflow(good(), `${MANIFEST}triggers: [{ type: email }]\ninput: { schema: { type: object } }\n`),
    );
    expect(emailWithInput.field).toBe('input');
    expect(emailWithInput.message).toContain("takes the email trigger's input");
    expect(loadError(workflow(good(), `${MANIFEST}local: { env: { lowercase: x } }\n`)).field).toMatch(/^local\.env/);
  });

  it('rejects an unknown entry or fallback step in the manifest', () => {
    const e = loadError(workflow(good(), MANIFEST.replace('fallback: z-fallback', 'fallback: nowhere')));
    expect(e.file).toMatch(/workflow\.yaml$/);
    expect(e.field).toBe('fallback');
  });

  it('rejects a missing frontmatter block, bad YAML and missing required fields', () => {
    expect(loadError(workflow({ ...good(), 'b-second.md': 'just markdown' })).field).toBe('(frontmatter)');
    expect(loadError(workflow({ ...good(), 'b-second.md': '---\nname: [unclosed\n---\nbody' })).field).toBe('(yaml)');
    const noVersion = step('b-second', ['DONE']).replace('version: 1.0.0\n', '');
    expect(loadError(workflow({ ...good(), 'b-second.md': noVersion })).field).toBe('version');
  });

  it('requires a handler for code steps and an instruction body for LLM steps', () => {
    const code = step('b-second', ['DONE']).replace('kind: llm', 'kind: code');
    expect(loadError(workflow({ ...good(), 'b-second.md': code })).field).toBe('handler');
    expect(loadError(workflow({ ...good(), 'b-second.md': step('b-second', ['DONE'], '', '') })).field).toBe('(body)');
  });

  it('rejects a step whose name does not match its file name', () => {
    const e = loadError(workflow({ ...good(), 'b-second.md': step('b-other', ['DONE']) }));
    expect(e.message).toContain('must match the file name');
  });

  it('names the known workflows when asked for an unknown one', () => {
    const dir = workflow(good());
    const root = join(dir, '..');
    expect(() => loadWorkflow('nope', root)).toThrow(/unknown workflow "nope" \(known: demo\)/);
  });

  it('loads a workflow once per process (instructions are cached)', () => {
    const dir = workflow(good());
    const root = join(dir, '..');
    const first = loadWorkflow('demo', root);
    writeFileSync(join(dir, 'steps', 'a-first.md'), step('a-first', ['b-second', 'DONE'], '', 'Changed on disk.'));
    expect(loadWorkflow('demo', root)).toBe(first);
    expect(first.steps[0]!.instruction).toBe('Do the thing.');
  });
});
