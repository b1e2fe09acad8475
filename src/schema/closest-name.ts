/**
 * Levenshtein edit distance between two strings (insertions, deletions, substitutions cost 1),
 * in UTF-16 code units. O(a·b) time, O(b) memory.
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Names longer than this many characters get no suggestion (no schema property name is that long). */
const MAX_COMPARED_NAME_CHARS = 512;

/**
 * The candidate closest to `name` by edit distance (case-insensitive), or `undefined` when none is
 * close enough: the distance must be at most `max(2, 40 %` of the longer name's length`)`.
 * Ties go to the first candidate. A name longer than 512 characters gets none.
 */
export function findClosestName(name: string, candidates: Iterable<string>): string | undefined {
  // The distance is at least the difference in length: a name far longer than every candidate (a
  // 1 MB hallucinated key) is compared with none, so the cost stays that of the candidates.
  if (name.length > MAX_COMPARED_NAME_CHARS) return undefined;
  const wanted = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const limit = Math.max(2, Math.floor(0.4 * Math.max(wanted.length, candidate.length)));
    if (Math.abs(wanted.length - candidate.length) > limit) continue;
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
