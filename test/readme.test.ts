import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../lambdas/lib/workflow/loader.ts';
import { PROJECT_ROOT } from '../lambdas/lib/project.ts';
import { workflowToMermaid } from '../lambdas/lib/workflow/mermaid.ts';

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');

describe('README', () => {
  it('shows the warranty-email diagram exactly as `stepwise graph` generates it', () => {
    expect(readme).toContain('```mermaid\n' + workflowToMermaid(loadWorkflow('warranty-email')) + '```');
  });

  it('has a Quick start of two command lines: install + demo, and the tests', () => {
    const quickStart = readme.split('## Quick start')[1]!.split('```bash\n')[1]!.split('```')[0]!;
    expect(quickStart.trim().split('\n')).toEqual(['npm install && npm run demo', 'npm test']);
  });
});
