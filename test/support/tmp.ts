/** Scratch directories for a test file, removed after all its tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { copyBuiltProject } from './built-package.ts';

/**
 * Returns a function that makes a fresh directory under the OS temp dir named `<prefix>XXXXXX`; all are removed in
 * `afterAll`.
 */
export function useTempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}

/**
 * A test file's copy of the built project (`copyBuiltProject`), made before its tests and removed after them: its CLI
 * starts without tsx, as an installed one does. Returns the copy's folder.
 */
export function useBuiltProject(prefix = 'stepwise-built-'): () => string {
  const tempDir = useTempDirs(prefix);
  let dir: string | undefined;
  beforeAll(() => {
    dir = copyBuiltProject(tempDir());
  });
  return () => {
    if (!dir) throw new Error('useBuiltProject: the copy is made in beforeAll; read it in a test or a later hook');
    return dir;
  };
}
