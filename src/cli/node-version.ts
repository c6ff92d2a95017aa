/** The one line the CLI writes on stderr under a Node.js older than the package supports (`engines`). */

/** The oldest Node.js major version the package supports (package.json `engines.node`: `>=22`). */
export const OLDEST_NODE = 22;

/** The warning for Node.js `version` (`process.versions.node`), or nothing when it is supported. */
export function nodeVersionWarning(version: string, oldest: number = OLDEST_NODE): string | undefined {
  const major = Number(version.split('.')[0]);
  if (!Number.isFinite(major) || major >= oldest) return undefined;
  return `warning: stepwise supports Node.js ${oldest} or later; this is Node.js ${version}, which may fail in ways no test covers\n`;
}
