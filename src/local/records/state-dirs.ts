/**
 * Where the local runtime, the CLI and Studio keep their records: one folder per kind under the
 * project's `.stepwise/` (git-ignored). Every default path of the local state comes from here, and
 * here only from `STEPWISE_DIR`; a test or a Studio instance points all of them at another root at once.
 */
import { join } from 'node:path';
import { STATE_DIR as STEPWISE_DIR } from '../../core/paths.ts';

export interface StateDirs {
  /** The root (`.stepwise/`). */
  root: string;
  /** One `ExecutionRecord` per local execution (`stepwise history`, `stats`, Studio). */
  executions: string;
  /** Executions paused at a checkpoint (`stepwise executions`, `resume`). */
  pauses: string;
  /** The bodies of emails the local email ingress received, for forks of their executions. */
  emails: string;
  /** One report per `stepwise eval` run, by workflow. */
  evals: string;
  /** Deployed executions imported from a `GetExecutionHistory` file or by ARN. */
  imports: string;
  /** Inbound mail the local email ingress refused, one record each with the reason. */
  refused: string;
  /** Outside events delivered to local event steps (`stepwise send-event`, the bus, email replies): one outcome a line. */
  outsideEvents: string;
}

/** The state folders under `root`. */
export function stateDirs(root: string = STEPWISE_DIR): StateDirs {
  return {
    root,
    executions: join(root, 'executions'),
    pauses: join(root, 'pauses'),
    emails: join(root, 'emails'),
    evals: join(root, 'evals'),
    imports: join(root, 'imports'),
    refused: join(root, 'refused'),
    outsideEvents: join(root, 'events.jsonl'),
  };
}

/** The project's own state folders. */
export const DEFAULT_STATE_DIRS: StateDirs = stateDirs();

/**
 * A name that can be a file name in a state folder: an execution, email, eval run or import name.
 * No path separators, no `..`, no control characters (what could reach outside the folder).
 */
export const SAFE_RECORD_NAME = /^(?!\.{1,2}$)[^\s/\\<>:"|?*\u0000-\u001f\u007f]{1,200}$/;
