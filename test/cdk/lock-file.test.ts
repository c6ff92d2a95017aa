import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockFile } from '../../src/cdk/constructs/stepwise-function.ts';
import { ConfigError } from '../../src/core/errors.ts';

describe("a project's lock file, which the Lambda bundles are built from", () => {
  const dirs: string[] = [];
  const project = (...files: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'stepwise-lock-'));
    dirs.push(dir);
    for (const f of files) writeFileSync(join(dir, f), '');
    return dir;
  };
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it("is npm's, pnpm's, yarn's or bun's, whichever the project has", () => {
    expect(lockFile(project('package-lock.json'))).toMatch(/package-lock\.json$/);
    expect(lockFile(project('pnpm-lock.yaml'))).toMatch(/pnpm-lock\.yaml$/);
    expect(lockFile(project('yarn.lock'))).toMatch(/yarn\.lock$/);
    expect(lockFile(project('bun.lock'))).toMatch(/bun\.lock$/);
  });

  it("is the workspace's when the project sits in a monorepo without one of its own", () => {
    const workspace = project('package-lock.json');
    const agents = join(workspace, 'packages', 'agents');
    mkdirSync(agents, { recursive: true });
    expect(lockFile(agents)).toBe(join(workspace, 'package-lock.json'));
  });

  it('is a one-line error saying to install first when the project has none', () => {
    const dir = project();
    expect(() => lockFile(dir)).toThrow(ConfigError);
    expect(() => lockFile(dir)).toThrow(
      `${dir}: no lock file (package-lock.json, pnpm-lock.yaml, yarn.lock, bun.lockb, bun.lock): install the project's dependencies first (npm install)`,
    );
  });
});
