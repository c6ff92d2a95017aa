/** "Did you mean" for a misspelt name: the nearest of the names it could have been, when one is close. */

/** The edit distance of two words (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** The name of `names` nearest to `name`, when it is close enough to be a typo (at most a third of it wrong, or 2). */
export function nearestName(name: string, names: readonly string[]): string | undefined {
  const best = names
    .filter((n) => n !== name)
    .map((n) => ({ n, d: editDistance(name.toLowerCase(), n.toLowerCase()) }))
    .sort((a, b) => a.d - b.d)[0];
  return best && best.d <= Math.max(2, Math.floor(name.length / 3)) ? best.n : undefined;
}

/** `: did you mean "x"?` for a message about `name`, or nothing when no name is close. */
export function didYouMean(name: string, names: readonly string[]): string {
  const nearest = nearestName(name, names);
  return nearest === undefined ? '' : `: did you mean "${nearest}"?`;
}
