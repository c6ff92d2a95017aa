/** What a checkpoint asks of the person resuming it, as lines to read (never JSON-escaped text). */
export function actionLines(requiredActions: unknown): string[] {
  if (requiredActions === null || requiredActions === undefined) return [];
  const line = (a: unknown) => (typeof a === 'string' ? a : JSON.stringify(a));
  if (Array.isArray(requiredActions)) return requiredActions.map(line);
  if (typeof requiredActions === 'string')
    return requiredActions
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  return [line(requiredActions)];
}

/** The approve box's first text: an empty object, since no step declares the shape of what it reads back. */
export const EMPTY_OUTPUT = '{}';
