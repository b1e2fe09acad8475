/**
 * Resolution of the tool names models really produce to the names a runtime offers
 * (SPEC.md §1.5, issue 2): a different case, `.` vs `_`, a prefix (`functions.`, `default_api:`), a
 * typo, a dropped or wrong namespace.
 */

/**
 * What a requested tool name resolves to among the available ones:
 * - `match`: an available name that is an unambiguous equivalent spelling of the request (case,
 *   separators, a known prefix, a dropped namespace) — safe to call instead;
 * - `closest`: the best suggestion for a `TOOL_NOT_FOUND` failure (also typos and wrong
 *   namespaces); equals `match` when there is one; absent when nothing is close;
 * - `candidates`: up to 3 suggestions, best first (`closest` first).
 */
export interface ToolNameResolution {
  match?: string;
  closest?: string;
  candidates: string[];
}

/**
 * Prefixes models put before a tool name, stripped from the request (repeatedly) when the name as
 * sent does not resolve. Matched on the lowercased name.
 */
const KNOWN_PREFIXES: readonly RegExp[] = [
  /^(?:functions|function|default_api|tools|tool)[.:/]/,
  // MCP clients namespace tools as mcp__<server>__<tool>
  /^mcp__[\p{L}\p{N}-]+(?:_[\p{L}\p{N}-]+)*__/u,
];

/** A namespace separator in an available name: `.`, `/`, `:` or a double underscore. */
const NAMESPACE_SEPARATOR = /[./:]|__/g;

/** The largest normalised edit cost (edits / length) accepted as a suggestion. */
const MAX_SUGGESTION_COST = 0.34;
/** The cost added to a suggestion that rests on the last segment alone (a wrong namespace). */
const NAMESPACE_PENALTY = 0.12;
/** How many candidates a resolution lists. */
const MAX_CANDIDATES = 3;
/**
 * Requests longer than this many characters resolve to nothing (no match, no suggestion): a
 * registered name has at most 128 characters, and a 1 MB hallucinated name must cost no more than a
 * short one (stripping prefixes and quotes is otherwise quadratic in its length).
 */
export const MAX_RESOLVED_NAME_LENGTH = 512;

interface PreparedName {
  name: string;
  index: number;
  /** Lowercase, letters and digits only: `math.factorial` → `mathfactorial`. */
  compact: string;
  /** Lowercase with every separator run as `_`: `Math.Factorial` → `math_factorial`. */
  loose: string;
  /** The compact form after the last namespace separator (`factorial`), or the whole compact form. */
  last: string;
  /** Whether the name has a namespace. */
  namespaced: boolean;
  /** Character counts of `compact` and `last`, for a cheap lower bound of the edit distance. */
  compactBag: Int16Array;
  lastBag: Int16Array;
}

/**
 * Builds a resolver over the available tool names. The names are normalised once here; each
 * lookup then costs one pass of Damerau-Levenshtein (optimal string alignment) over the names whose
 * length is in range. Not cached: call it for names that were not found.
 *
 * Resolution, in order (a `match` is only ever given when exactly one name qualifies):
 * 1. the name as sent, then after stripping known prefixes (`functions.`, `default_api:`,
 *    `default_api.`, `tools.`, `mcp__server__`…), compared ignoring case and separators
 *    (`.`, `_`, `-`, `/`, `:`, spaces; `getWeather` = `get_weather`); when several names compare
 *    equal, the one with the same separators wins if unique;
 * 2. a dropped namespace: the request equals the part of exactly one name after a namespace
 *    separator (`factorial` → `math.factorial`);
 * 3. otherwise suggestions only (`closest`, `candidates`): Damerau-Levenshtein distance between the
 *    normalised names, or between their last segments (a wrong namespace: `physics.factorial` →
 *    `math.factorial`), or a name the request starts or ends with (`search_web_v2` → `search_web`),
 *    accepted up to about one edit in three characters.
 *
 * A request longer than {@link MAX_RESOLVED_NAME_LENGTH} characters gets neither a match nor a suggestion.
 *
 * @see SPEC.md §1.5
 */
export function createToolNameResolver(available: readonly string[]): (requested: string) => ToolNameResolution {
  const prepared: PreparedName[] = [];
  const exact = new Set<string>();
  const byCompact = new Map<string, PreparedName[]>();
  const bySuffix = new Map<string, PreparedName[]>();
  for (const name of available) {
    if (exact.has(name)) continue;
    exact.add(name);
    const entry = prepareName(name, prepared.length);
    prepared.push(entry);
    pushTo(byCompact, entry.compact, entry);
    for (const suffix of namespaceSuffixes(name)) {
      if (suffix !== entry.compact) pushTo(bySuffix, suffix, entry);
    }
  }
  const workspace: DistanceWorkspace = { rows: [new Int32Array(0), new Int32Array(0), new Int32Array(0)] };

  return (requested: string): ToolNameResolution => {
    if (exact.has(requested)) return resolved(requested);
    if (typeof requested !== 'string' || requested.length > MAX_RESOLVED_NAME_LENGTH) return { candidates: [] };
    const variants = requestVariants(requested);

    // 1. equivalent spellings
    for (const variant of variants) {
      const key = compactOf(variant);
      const same = byCompact.get(key);
      if (same === undefined) continue;
      // a name that has the request as its namespace suffix competes (`circle_area`: `circle.area` or `math.circle_area`?)
      const rivals = (bySuffix.get(key) ?? []).filter((entry) => !same.includes(entry));
      const lower = variant.toLowerCase();
      const sameCase = same.filter((entry) => entry.name.toLowerCase() === lower);
      if (sameCase.length === 1) return resolved(sameCase[0]!.name);
      if (rivals.length === 0) {
        if (same.length === 1) return resolved(same[0]!.name);
        const loose = looseOf(variant);
        const sameSeparators = same.filter((entry) => entry.loose === loose);
        if (sameSeparators.length === 1) return resolved(sameSeparators[0]!.name);
      }
      return suggestions(rankByRawDistance([...same, ...rivals], variant));
    }

    // 2. a dropped namespace
    for (const variant of variants) {
      const owners = bySuffix.get(compactOf(variant));
      if (owners === undefined) continue;
      if (owners.length === 1) return resolved(owners[0]!.name);
      return suggestions(rankByRawDistance(owners, variant));
    }

    // 3. typos and wrong namespaces
    const request = variants[variants.length - 1] ?? requested;
    const requestCompact = compactOf(request);
    const requestLast = lastSegmentOf(request);
    const requestNamespaced = hasNamespace(request);
    const requestBags = { compact: bagOf(requestCompact), last: bagOf(requestLast) };
    const scored: Array<{ entry: PreparedName; cost: number; distance: number }> = [];
    for (const entry of prepared) {
      const cost = suggestionCost(requestCompact, requestLast, requestNamespaced, requestBags, entry, workspace);
      if (cost !== undefined) scored.push({ entry, cost: cost.cost, distance: cost.distance });
    }
    scored.sort((a, b) => a.cost - b.cost || a.distance - b.distance || a.entry.index - b.entry.index);
    return suggestions(scored.map((item) => item.entry.name));
  };
}

function resolved(name: string): ToolNameResolution {
  return { match: name, closest: name, candidates: [name] };
}

function suggestions(names: readonly string[]): ToolNameResolution {
  const candidates = names.slice(0, MAX_CANDIDATES);
  const closest = candidates[0];
  return closest === undefined ? { candidates } : { closest, candidates };
}

function pushTo(map: Map<string, PreparedName[]>, key: string, entry: PreparedName): void {
  if (key === '') return;
  const list = map.get(key);
  if (list === undefined) map.set(key, [entry]);
  else if (!list.includes(entry)) list.push(entry);
}

function prepareName(name: string, index: number): PreparedName {
  const compact = compactOf(name);
  const last = lastSegmentOf(name);
  return { name, index, compact, loose: looseOf(name), last, namespaced: hasNamespace(name), compactBag: bagOf(compact), lastBag: bagOf(last) };
}

/** The request as sent (cleaned), then after each known prefix stripped. */
function requestVariants(requested: string): string[] {
  // models sometimes quote the name or write it as a call: `"math.factorial"`, math.factorial()
  let current = requested
    .trim()
    .replace(/^["'`]+|["'`]+$/g, '')
    .replace(/\(\s*\)$/, '')
    .trim();
  const variants = [current];
  for (let stripped = true; stripped;) {
    stripped = false;
    const lower = current.toLowerCase();
    for (const prefix of KNOWN_PREFIXES) {
      const found = prefix.exec(lower);
      if (found !== null && found[0].length < current.length) {
        current = current.slice(found[0].length);
        variants.push(current);
        stripped = true;
        break;
      }
    }
  }
  return variants;
}

/** Lowercase, letters and digits only. */
function compactOf(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** Lowercase, camelCase humps split, every run of separators as one `_`. */
function looseOf(name: string): string {
  return name
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1_$2')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_|_$/g, '');
}

function hasNamespace(name: string): boolean {
  NAMESPACE_SEPARATOR.lastIndex = 0;
  return NAMESPACE_SEPARATOR.test(name);
}

/** The compact forms of every part of `name` after a namespace separator, longest first. */
function namespaceSuffixes(name: string): string[] {
  const suffixes: string[] = [];
  NAMESPACE_SEPARATOR.lastIndex = 0;
  for (let found = NAMESPACE_SEPARATOR.exec(name); found !== null; found = NAMESPACE_SEPARATOR.exec(name)) {
    suffixes.push(compactOf(name.slice(found.index + found[0].length)));
  }
  return suffixes;
}

function lastSegmentOf(name: string): string {
  const suffixes = namespaceSuffixes(name);
  const last = suffixes[suffixes.length - 1];
  return last === undefined || last === '' ? compactOf(name) : last;
}

/** Ranks names that all match the request equally well, by the edits between the request and the name or its part after a namespace separator, as spelled; ties keep the given order. */
function rankByRawDistance(entries: readonly PreparedName[], request: string): string[] {
  const lower = request.toLowerCase();
  const workspace = freshWorkspace();
  const distanceTo = (entry: PreparedName): number => {
    let best = boundedDistance(lower, entry.name.toLowerCase(), Number.MAX_SAFE_INTEGER, workspace);
    NAMESPACE_SEPARATOR.lastIndex = 0;
    for (let found = NAMESPACE_SEPARATOR.exec(entry.name); found !== null; found = NAMESPACE_SEPARATOR.exec(entry.name)) {
      const suffix = entry.name.slice(found.index + found[0].length).toLowerCase();
      best = Math.min(best, boundedDistance(lower, suffix, Number.MAX_SAFE_INTEGER, workspace));
    }
    return best;
  };
  return entries
    .map((entry, order) => ({ entry, order, distance: distanceTo(entry) }))
    .sort((a, b) => a.distance - b.distance || a.order - b.order)
    .map((item) => item.entry.name);
}

/**
 * The normalised cost of suggesting `entry` for the request (edits divided by the longer length,
 * plus a penalty for a wrong namespace), or `undefined` when it is too far to suggest.
 */
function suggestionCost(
  requestCompact: string,
  requestLast: string,
  requestNamespaced: boolean,
  requestBags: { compact: Int16Array; last: Int16Array },
  entry: PreparedName,
  workspace: DistanceWorkspace,
): { cost: number; distance: number } | undefined {
  let best: { cost: number; distance: number } | undefined;
  const consider = (cost: number, distance: number) => {
    if (cost <= MAX_SUGGESTION_COST && (best === undefined || cost < best.cost || (cost === best.cost && distance < best.distance))) {
      best = { cost, distance };
    }
  };
  // a typo anywhere
  const longest = Math.max(requestCompact.length, entry.compact.length);
  const budget = Math.floor(longest * MAX_SUGGESTION_COST);
  if (Math.abs(requestCompact.length - entry.compact.length) <= budget && bagDistance(requestBags.compact, entry.compactBag) <= budget) {
    const distance = boundedDistance(requestCompact, entry.compact, budget, workspace);
    if (distance <= budget) consider(distance / longest, distance);
  }
  // a wrong (or dropped, with a typo) namespace: compare the last segments
  if (entry.namespaced || requestNamespaced) {
    const lastLongest = Math.max(requestLast.length, entry.last.length);
    const lastBudget = Math.floor(lastLongest * (MAX_SUGGESTION_COST - NAMESPACE_PENALTY));
    if (Math.abs(requestLast.length - entry.last.length) <= lastBudget && bagDistance(requestBags.last, entry.lastBag) <= lastBudget) {
      const distance = boundedDistance(requestLast, entry.last, lastBudget, workspace);
      if (distance <= lastBudget) consider(NAMESPACE_PENALTY + distance / lastLongest, distance);
    }
    // `physics_factorial`: a wrong namespace whose separator became `_`
    if (!requestNamespaced && entry.last.length >= 4 && requestCompact.endsWith(entry.last)) {
      consider(NAMESPACE_PENALTY + (requestCompact.length - entry.last.length) / (4 * requestCompact.length), 0);
    }
  }
  // an added or dropped version or qualifier: `search_web_v2` → `search_web`
  const shorter = requestCompact.length < entry.compact.length ? requestCompact : entry.compact;
  const longer = shorter === requestCompact ? entry.compact : requestCompact;
  if (shorter.length >= 4 && (longer.startsWith(shorter) || longer.endsWith(shorter))) {
    consider((longer.length - shorter.length) / (2 * longer.length), longer.length - shorter.length);
  }
  return best;
}

/** Buckets of {@link bagOf}: a–z, 0–9, anything else. */
const BAG_SIZE = 37;

/** How many times each character occurs (letters and digits; every other character shares one bucket). */
function bagOf(text: string): Int16Array {
  const bag = new Int16Array(BAG_SIZE);
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    const bucket = code >= 97 && code <= 122 ? code - 97 : code >= 48 && code <= 57 ? code - 22 : 36;
    bag[bucket] = (bag[bucket] ?? 0) + 1;
  }
  return bag;
}

/**
 * The bag distance: a lower bound of the edit distance (each edit changes the character counts by
 * at most one on each side; a transposition does not change them), computed in constant time.
 */
function bagDistance(a: Int16Array, b: Int16Array): number {
  let surplus = 0;
  let deficit = 0;
  for (let index = 0; index < BAG_SIZE; index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference > 0) surplus += difference;
    else deficit -= difference;
  }
  return Math.max(surplus, deficit);
}

interface DistanceWorkspace {
  rows: [Int32Array, Int32Array, Int32Array];
}

function freshWorkspace(): DistanceWorkspace {
  return { rows: [new Int32Array(0), new Int32Array(0), new Int32Array(0)] };
}

/**
 * The Damerau-Levenshtein distance between two strings, optimal string alignment variant: the
 * fewest insertions, deletions, substitutions and transpositions of adjacent characters (each
 * costing 1, UTF-16 code units) that turn `a` into `b`, no substring edited twice.
 *
 * With `maxDistance`, it stops early and returns `maxDistance + 1` as soon as the distance is known
 * to exceed it. Pure.
 */
export function damerauLevenshtein(a: string, b: string, maxDistance = Number.MAX_SAFE_INTEGER): number {
  return boundedDistance(a, b, maxDistance, freshWorkspace());
}

/** {@link damerauLevenshtein} with reusable rows (lookups are hot). */
function boundedDistance(a: string, b: string, maxDistance: number, workspace: DistanceWorkspace): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  const width = b.length + 1;
  if (workspace.rows[0].length < width) workspace.rows = [new Int32Array(width), new Int32Array(width), new Int32Array(width)];
  let [twoBack, previous, current] = workspace.rows;
  for (let j = 0; j < width; j += 1) previous[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    current[0] = i;
    let rowMinimum = i;
    const charA = a.charCodeAt(i - 1);
    for (let j = 1; j < width; j += 1) {
      const charB = b.charCodeAt(j - 1);
      const substitution = previous[j - 1]! + (charA === charB ? 0 : 1);
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
      if (i > 1 && j > 1 && charA === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === charB) {
        value = Math.min(value, twoBack[j - 2]! + 1);
      }
      current[j] = value;
      if (value < rowMinimum) rowMinimum = value;
    }
    if (rowMinimum > maxDistance) return maxDistance + 1;
    [twoBack, previous, current] = [previous, current, twoBack];
  }
  return previous[b.length]!;
}
