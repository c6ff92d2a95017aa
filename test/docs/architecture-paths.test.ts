/**
 * The architecture page names the engine's files (the rooms, where to find things, the hops of one mail): every
 * one of them is there, so a move that forgets the page fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAYERS, SRC_DIR } from '../../docs/generate/architecture.ts';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';

const page = readFileSync(join(PACKAGE_ROOT, 'docs/internals/architecture.md'), 'utf8');
/** `runtime/steps/runner.ts`, `src/local/records/`: a path under a layer of `src/`, with or without `src/`. */
const ENGINE_PATH = new RegExp(`(?<![\\w./-])(?:src/)?(?:${LAYERS.map((l) => l.name).join('|')})/[\\w./-]*[\\w/]`, 'g');

/** The engine paths `text` names, relative to `src/`. */
const enginePaths = (text: string) => [
  ...new Set([...text.matchAll(ENGINE_PATH)].map((m) => m[0].replace(/^src\//, ''))),
];

describe('the architecture page', () => {
  it('names only files and folders of src/ that exist', () => {
    const named = enginePaths(page);
    expect(named.length).toBeGreaterThan(40);
    expect(named.filter((path) => !existsSync(join(SRC_DIR, path)))).toEqual([]);
  });

  it('draws one mail from the CLI to its history record through each room of the emulator', () => {
    const sequence = /```mermaid\nsequenceDiagram\n([\s\S]*?)```/.exec(page)?.[1] ?? '';
    const hops = enginePaths(sequence);
    for (const room of ['cloud', 'records', 'asl', 'sessions'])
      expect(hops.some((path) => path.startsWith(`local/${room}/`))).toBe(true);
    expect(hops).toEqual(expect.arrayContaining(['cli/commands/run.ts', 'local/records/history.ts']));
  });

  it('would name a path that is not there (the check can fail)', () => {
    expect(enginePaths('see `src/local/runtime.ts` and cdk/constructs/agent-workflow.ts, not docs/x.md')).toEqual([
      'local/runtime.ts',
      'cdk/constructs/agent-workflow.ts',
    ]);
    expect(existsSync(join(SRC_DIR, 'local/runtime.ts'))).toBe(false);
  });
});
