// The nearest of a few names to a misspelt one (pure): a setting variable, a module variable.

/** The name within 3 edits of `name` (the fewest; none when two tie), if any. */
export function closestName(name: string, names: readonly string[]): string | undefined {
  const ranked = names
    .map((candidate) => ({ candidate, edits: editDistance(name, candidate) }))
    .sort((a, b) => a.edits - b.edits);
  const [best, next] = ranked;
  return best && best.edits <= 3 && next?.edits !== best.edits ? best.candidate : undefined;
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
