import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../src/core/paths.ts';

// vitest strips types without checking them; the project is strict TypeScript, so check it here too, with TypeScript 7
// (the native compiler: 4x faster than tsc 5 here, the same diagnostics; tsc 5 writes the package's declarations).
describe('TypeScript', () => {
  it('the whole project type-checks (tsc --noEmit, strict)', async () => {
    const run = promisify(execFile)(
      process.execPath,
      ['node_modules/typescript-native/bin/tsc', '--noEmit', '-p', 'tsconfig.json'],
      { cwd: PROJECT_ROOT },
    );
    const result = await run.then(
      ({ stdout }) => ({ code: 0, stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
    expect(result.stdout).toBe('');
    expect(result.code).toBe(0);
  }, 600_000);
});
