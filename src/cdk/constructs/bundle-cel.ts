/**
 * Whether a function's bundle takes the CEL evaluator (`BundleOptions.cel`): decided at synth from
 * what the workflow folder it ships with compiles. See src/core/expressions.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { loadGuardRules } from '../../definitions/workflow/guard.ts';
import { loadWorkflow } from '../../definitions/workflow/loader.ts';
import { workflowCodeDir } from './lambda-entry.ts';

/** A guard rules file of the workflow in `dir` has a check of type `expression`. */
function guardsWithExpressions(dir: string): boolean {
  // A lifecycle's folder ships with its functions too, and has no manifest.
  if (!existsSync(join(dir, 'workflow.yaml'))) return false;
  const def = loadWorkflow(basename(dir), dirname(dir));
  return def.steps.some((step) => loadGuardRules(def, step)?.checks.some((check) => check.type === 'expression'));
}

/** A module of the code folder names `compileExpression` (the public API's, imported from `stepwise`). */
function codeCompilesExpressions(codeDir: string): boolean {
  if (!existsSync(codeDir)) return false;
  return readdirSync(codeDir, { recursive: true, encoding: 'utf8' }).some(
    (file) =>
      /\.[cm]?[jt]s$/.test(file) &&
      !file.split(/[\\/]/).includes('node_modules') &&
      /\bcompileExpression\b/.test(readFileSync(join(codeDir, file), 'utf8')),
  );
}

/**
 * Whether the function shipped with `workflowDir` may compile a CEL expression: a guard rule of
 * type `expression` (the output guard evaluates it in the step's function, the single-prompt
 * agent's included), or workflow code that calls `compileExpression`. A function with no workflow
 * folder (the email ingress, the outbox publisher) compiles none. A module outside the code folder
 * that compiles one is not seen: its call throws ExpressionsNotBundledError, loudly.
 */
export function celInBundle(workflowDir: string | undefined): boolean {
  if (workflowDir === undefined) return false;
  return guardsWithExpressions(workflowDir) || codeCompilesExpressions(workflowCodeDir(workflowDir));
}
