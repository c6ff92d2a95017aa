import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../lambdas/lib/workflow/loader.ts';
import { PROJECT_ROOT } from '../../lambdas/lib/project.ts';
import { workflowToMermaid } from '../../lambdas/lib/workflow/mermaid.ts';

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');

describe('README: the turn pipeline', () => {
  it('shows the turn-pipeline diagram exactly as `stepwise graph` generates it', () => {
    expect(readme).toContain('```mermaid\n' + workflowToMermaid(loadWorkflow('turn-pipeline')) + '```');
  });
});
