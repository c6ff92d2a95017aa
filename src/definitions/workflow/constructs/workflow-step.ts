/**
 * A `workflow` step: another workflow of the same project started as one step, its result awaited
 * (`startExecution.sync:2`, src/cdk/constructs/compile/workflow-step.ts). This module checks the
 * call against the project's other workflows: the child exists, is not started by mail, and no
 * workflow ends up calling itself.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DefinitionError } from '../../../core/errors.ts';
import { readDefinitionYaml, readFrontmatterFile, relPath } from '../../definition-file.ts';
import type { WorkflowDefinition } from '../schema.ts';

/** The Pass after the child ends: its outputs become the step's result. */
export const childResultStateName = (step: string): string => `${step}.result`;

/** The Task `Resource` of a started workflow whose result is awaited, its output as JSON. */
export const START_EXECUTION_SYNC = 'arn:aws:states:::states:startExecution.sync:2';

/** The workflows a workflow folder's steps start, with the step file of each call (frontmatter only, unchecked). */
function callsOf(root: string, workflow: string): { child: string; file: string }[] {
  const steps = join(root, workflow, 'steps');
  if (!existsSync(steps)) return [];
  return readdirSync(steps)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .flatMap((f) => {
      const file = join(steps, f);
      const fm = readFrontmatterFile(file).frontmatter as { kind?: unknown; workflow?: { name?: unknown } };
      const child = fm?.kind === 'workflow' ? fm.workflow?.name : undefined;
      return typeof child === 'string' ? [{ child, file: relPath(file) }] : [];
    });
}

/**
 * Each workflow step names a workflow of `root` that takes a direct start, and following the calls
 * never comes back to a workflow on the way.
 * @throws DefinitionError in one line: the unknown workflow, or the cycle (`a → b → a`).
 */
export function checkWorkflowCalls(def: WorkflowDefinition, root: string): void {
  const visit = (workflow: string, path: string[]): void => {
    for (const { child, file } of callsOf(root, workflow)) {
      const manifest = join(root, child, 'workflow.yaml');
      if (!existsSync(manifest))
        throw new DefinitionError(file, 'workflow.name', `unknown workflow "${child}" (no ${relPath(manifest)})`);
      if (path.includes(child))
        throw new DefinitionError(
          file,
          'workflow.name',
          `a cycle of workflows: ${[...path.slice(path.indexOf(child)), child].join(' → ')}`,
        );
      const triggers = (readDefinitionYaml(manifest) as { triggers?: { type?: string }[] })?.triggers ?? [];
      if (triggers.some((t) => t.type === 'email'))
        throw new DefinitionError(
          file,
          'workflow.name',
          `"${child}" starts from mail (its input is an email): not as a step`,
        );
      visit(child, [...path, child]);
    }
  };
  visit(def.manifest.name, [def.manifest.name]);
}

/**
 * The workflows `def` starts as steps, directly or through its children, each once: locally they
 * run in its session, with their tables and tools.
 */
export function calledWorkflows(def: WorkflowDefinition): string[] {
  const root = dirname(def.dir);
  const found = new Set<string>();
  const visit = (workflow: string) => {
    for (const { child } of callsOf(root, workflow))
      if (child !== def.manifest.name && !found.has(child)) {
        found.add(child);
        visit(child);
      }
  };
  visit(def.manifest.name);
  return [...found];
}
