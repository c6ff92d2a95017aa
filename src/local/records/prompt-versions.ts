/**
 * Earlier versions of a step's prompt, from the project's git history, for a fork that runs a step
 * with another prompt: the step file as committed, its frontmatter `version`, and a workflow folder
 * (a temporary copy) in which that step file replaces the current one. The compiled ASL stays the
 * current one, so a version whose routes or tools differ is refused.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { InvalidInputError } from '../../core/errors.ts';
import { PROJECT_ROOT } from '../../core/paths.ts';
import { loadWorkflowFrom, parseStepFile } from '../../definitions/workflow/loader.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';

/** One version of a step's prompt. */
export interface PromptVersion {
  /** `current` (the working tree) or the commit the file was taken from. */
  ref: string;
  /** The step's frontmatter `version` in it. */
  version: string;
  /** When it was committed (ISO), for a commit. */
  date?: string;
  /** The commit's subject line. */
  subject?: string;
}

const MAX_COMMITS = 20;

const git = (args: string[]) =>
  execFileSync('git', args, {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 4 * 1024 * 1024,
  });

/** The file of `step` relative to the project root (git paths). */
const stepPath = (def: WorkflowDefinition, step: string) =>
  relative(PROJECT_ROOT, join(def.dir, 'steps', `${step}.md`))
    .split('\\')
    .join('/');

/** The step file as committed in `ref`. @throws InvalidInputError when git has no such file there. */
function committedStepFile(def: WorkflowDefinition, step: string, ref: string): string {
  if (!/^[0-9a-f]{7,40}$/.test(ref)) throw new InvalidInputError(`not a commit: ${JSON.stringify(ref)}`);
  try {
    return git(['show', `${ref}:${stepPath(def, step)}`]);
  } catch {
    throw new InvalidInputError(`${step} has no prompt in commit ${ref}`);
  }
}

/**
 * The versions of a step's prompt: the current one first, then each committed text that differs
 * from the ones before it (newest first, the last 20 commits of the file). Only the current one
 * when git or the history is not there.
 */
export function promptVersions(def: WorkflowDefinition, step: string): PromptVersion[] {
  const current = def.steps.find((s) => s.name === step);
  if (!current) throw new InvalidInputError(`${def.manifest.name} has no step ${step}`);
  const versions: PromptVersion[] = [{ ref: 'current', version: current.version }];
  let log: string;
  try {
    log = git(['log', `-n${MAX_COMMITS}`, '--format=%H%x09%cI%x09%s', '--', stepPath(def, step)]);
  } catch {
    return versions;
  }
  const seen = new Set([current.instruction]);
  for (const line of log.split('\n').filter(Boolean)) {
    const [ref, date, subject] = line.split('\t') as [string, string, string];
    try {
      const parsed = parseStepFile(join(def.dir, 'steps', `${step}.md`), committedStepFile(def, step, ref));
      if (seen.has(parsed.instruction)) continue;
      seen.add(parsed.instruction);
      versions.push({ ref, version: parsed.version, date, subject });
    } catch {
      // A commit where the file did not parse under today's schema is no runnable version.
    }
  }
  return versions;
}

/**
 * A temporary `statemachines/` folder with a copy of the workflow in which each step of `refs`
 * has its prompt from that commit (`current` keeps it); `cleanup` removes it.
 * @throws InvalidInputError when a version routes, calls tools or outputs otherwise than the compiled step.
 */
export function workflowWithPrompts(
  def: WorkflowDefinition,
  refs: Record<string, string>,
): { statemachinesDir: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'stepwise-prompts-'));
  try {
    const dir = join(root, def.manifest.name);
    cpSync(def.dir, dir, { recursive: true });
    for (const [step, ref] of Object.entries(refs)) {
      if (ref === 'current') continue;
      if (!def.steps.some((s) => s.name === step))
        throw new InvalidInputError(`${def.manifest.name} has no step ${step}`);
      writeFileSync(join(dir, 'steps', `${step}.md`), committedStepFile(def, step, ref));
    }
    const changed = loadWorkflowFrom(dir);
    for (const step of changed.steps) {
      const now = def.steps.find((s) => s.name === step.name)!;
      const shape = (s: typeof step) => ({
        kind: s.kind,
        next: s.next,
        tools: s.tools,
        outputs: s.outputs,
        pause: s.pause,
        consensus: s.consensus,
      });
      if (!isDeepStrictEqual(shape(step), shape(now)))
        throw new InvalidInputError(
          `${step.name} at ${refs[step.name]} routes, calls tools or outputs otherwise than the compiled step: only its prompt can change in a fork`,
        );
    }
    return { statemachinesDir: root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
  } catch (e) {
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
}
