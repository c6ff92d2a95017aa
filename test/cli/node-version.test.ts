import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeVersionWarning, OLDEST_NODE } from '../../src/cli/node-version.ts';

describe('the CLI under an unsupported Node.js', () => {
  it('says so in one line on an older Node.js', () => {
    const warning = nodeVersionWarning('20.19.0');
    expect(warning).toMatch(/^warning: stepwise supports Node\.js 22 or later; this is Node\.js 20\.19\.0/);
    expect(warning!.trimEnd().split('\n')).toHaveLength(1);
  });

  it('says nothing on a supported one', () => {
    expect(nodeVersionWarning('22.0.0')).toBeUndefined();
    expect(nodeVersionWarning('24.3.1')).toBeUndefined();
  });

  it('knows the oldest Node.js package.json `engines` names', () => {
    const engines = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')).engines.node;
    expect(engines).toBe(`>=${OLDEST_NODE}`);
  });
});
