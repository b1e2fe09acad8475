/**
 * Resolution of the tool names models really produce to the names a runtime offers: a different
 * case, `.` vs `_`, a prefix (`functions.`, `default_api:`), a typo, a dropped or wrong namespace,
 * the name's words in another order; the call's argument names weigh the suggestions.
 */
import { findNestedCall, isPlaceholderName, suggestByArguments, type ArgumentShape } from './resolve-by-arguments.ts';
import { isParallelWrapperName } from './unwrap-parallel.ts';

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
  /**
   * Why `closest` was chosen when the name alone does not say it, as a phrase for a message:
   * `it takes "diameter"` (the arguments fit it), `the same words in another order`. Absent otherwise.
   */
  reason?: string;
  /**
   * The request is a call written as text or inside another call (`f(x=g(1))` as the name, or a
   * call object among the arguments) and `closest` is the tool it calls: calls cannot be nested.
   * `'outer'`: the name is call text whose outer name is `closest`; `'inner'`: the arguments hold a
   * call of `closest`. Absent otherwise.
   */
  nested?: 'outer' | 'inner';
}

/**
 * An available tool as the resolver sees it: its name and, when known, the names of its parameters
 * (the top-level properties of its JSON Schema) and which of them are required. Without
 * `parameters` the tool's fit to a call's arguments is unknown (neither favoured nor penalised).
 */
export interface ToolNameEntry {
  name: string;
  parameters?: readonly string[];
  required?: readonly string[];
  /**
   * The JSON Schema `type` of each parameter (a name or a list of names), when declared; a
   * parameter absent here accepts any type. Used to tell apart tools whose parameter names alike.
   */
  types?: Readonly<Record<string, string | readonly string[]>>;
}

/** Looks a requested name up; `args` (an object or its JSON text) weighs the suggestions. */
export type ToolNameResolver = (requested: string, args?: unknown) => ToolNameResolution;

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
  /** The name's words (lowercase, camelCase split), and the same sorted and joined: reordered parts compare equal. */
  words: string[];
  wordKey: string;
  /** Compact forms of the declared parameter names; `undefined` when unknown. */
  parameters: Map<string, string> | undefined;
  required: string[];
  /** The parameters with their types, for a suggestion from the arguments alone; `undefined` when unknown. */
  shape: ArgumentShape | undefined;
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
 *    accepted up to about one edit in three characters;
 * 4. when the name suggests nothing: a call nested in the arguments (`{ "name": "t", "arguments":
 *    {…} }`) of an offered tool; else, for a name that carries nothing (`func1`, `function_2`, `""`),
 *    the one tool whose parameters take every argument by name and type (required ones present
 *    first); two tools that fit equally: no suggestion.
 *
 * A request written as call text whose outer name is an offered tool (`f(x=f(1))`) suggests that
 * tool with {@link ToolNameResolution.nested} set; it is never run.
 *
 * A request longer than {@link MAX_RESOLVED_NAME_LENGTH} characters gets neither a match nor a suggestion.
 *
 * @see SPEC.md §1.5
 */
export function createToolNameResolver(available: ReadonlyArray<string | ToolNameEntry>): ToolNameResolver {
  const prepared: PreparedName[] = [];
  const exact = new Set<string>();
  const byCompact = new Map<string, PreparedName[]>();
  const bySuffix = new Map<string, PreparedName[]>();
  for (const item of available) {
    const name = typeof item === 'string' ? item : item.name;
    if (exact.has(name)) continue;
    exact.add(name);
    const entry = prepareName(name, prepared.length, typeof item === 'string' ? undefined : item);
    prepared.push(entry);
    pushTo(byCompact, entry.compact, entry);
    for (const suffix of namespaceSuffixes(name)) {
      if (suffix !== entry.compact) pushTo(bySuffix, suffix, entry);
    }
  }
  const workspace: DistanceWorkspace = { rows: [new Int32Array(0), new Int32Array(0), new Int32Array(0)] };

  const resolve = (requested: string, args?: unknown): ToolNameResolution => {
    if (exact.has(requested)) return resolvedName(requested);
    if (typeof requested !== 'string' || requested.length > MAX_RESOLVED_NAME_LENGTH) return { candidates: [] };
    const argumentObject = argumentsOf(args);
    // call text (`f(x=1)`, `f(x=g(1))`) sent as the name: its outer name, never run
    if (CALL_TEXT_NAME.test(requested)) {
      const written = resolveByArguments(requested, argumentObject);
      if (written !== undefined) return written;
    }
    const byName = resolveByName(requested, argumentObject === undefined ? undefined : argumentNamesOf(argumentObject));
    if (byName.match !== undefined || byName.closest !== undefined) return byName;
    return resolveByArguments(requested, argumentObject) ?? byName;
  };
  return resolve;

  /** Step 4 and call text: what the arguments (or the call written as the name) point to, or `undefined`. */
  function resolveByArguments(requested: string, argumentObject: Record<string, unknown> | undefined): ToolNameResolution | undefined {
    const offered = (name: string): string | undefined => (name === requested ? undefined : resolve(name).match);
    const nested = findNestedCall(requested, argumentObject, offered);
    if (nested !== undefined) {
      // `f(x=1)` sent as the name is a call written out; `f(x=g(1))` nests one call in another
      const written = nested.where === 'outer' && !CALL_INSIDE.test(requested.slice(requested.indexOf('(') + 1));
      return {
        closest: nested.tool,
        candidates: [nested.tool],
        ...(written ? { reason: 'the name was sent with its arguments written after it' } : { nested: nested.where }),
      };
    }
    // a meaningful name that resembles nothing (`cancel_reservation` with `book_reservation`'s arguments) is not
    // turned into another tool on its arguments: only a name that carries nothing is
    if (argumentObject === undefined || !isPlaceholderName(requested)) return undefined;
    const shapes = prepared.flatMap((entry) => (entry.shape === undefined ? [] : [entry.shape]));
    const suggestion = suggestByArguments(argumentObject, shapes);
    if (suggestion.closest === undefined) return undefined;
    return { closest: suggestion.closest, candidates: suggestion.candidates, ...(suggestion.reason === undefined ? {} : { reason: suggestion.reason }) };
  }

  /** Steps 1 to 3: the name, with the argument names weighing equally good names. */
  function resolveByName(requested: string, argumentNames: readonly string[] | undefined): ToolNameResolution {
    const variants = requestVariants(requested);
    const requestWordKey = [...wordsOf(variants[variants.length - 1] ?? requested)].sort().join(' ');
    const requestTail = lastSegmentOf(variants[variants.length - 1] ?? requested);
    const resolved = (name: string, viaSuffix = false): ToolNameResolution =>
      guardMatch(name, argumentNames, requestWordKey, viaSuffix ? requestTail : undefined);

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
      return weighed(rankByRawDistance([...same, ...rivals], variant), argumentNames);
    }

    // 2. a dropped namespace
    for (const variant of variants) {
      const owners = bySuffix.get(compactOf(variant));
      if (owners === undefined) continue;
      if (owners.length === 1) return resolved(owners[0]!.name, true);
      return weighed(rankByRawDistance(owners, variant), argumentNames);
    }

    // 3. typos and wrong namespaces
    const request = variants[variants.length - 1] ?? requested;
    const requestCompact = compactOf(request);
    const requestLast = lastSegmentOf(request);
    const asked: RequestedName = {
      compact: requestCompact,
      last: requestLast,
      namespaced: hasNamespace(request),
      compactBag: bagOf(requestCompact),
      lastBag: bagOf(requestLast),
    };
    const requestWords = wordsOf(request);
    const scored: Array<{ entry: PreparedName; cost: number; nameCost: number; distance: number; reordered: boolean }> = [];
    for (const entry of prepared) {
      const cost = suggestionCost(asked, entry, workspace);
      let nameCost = cost?.cost;
      let distance = cost?.distance ?? Number.MAX_SAFE_INTEGER;
      // `evolution.prediction` for `prediction.evolution`: the same words in another order
      const reordered = requestWords.length >= 2 && entry.wordKey === requestWordKey;
      if (reordered && (nameCost === undefined || nameCost > REORDERED_COST)) {
        nameCost = REORDERED_COST;
        distance = 0;
      }
      const fit = argumentNames === undefined ? undefined : argumentFit(argumentNames, entry);
      // a name that shares words with the request and takes exactly these arguments (`circle.calculate_circumference`
      // for `circle.calculate_perimeter` with `diameter`) is a candidate even when its spelling is far
      if (nameCost === undefined && fit !== undefined && fit.complete) {
        const overlap = wordOverlap(requestWords, entry.words);
        if (overlap >= MIN_WORD_OVERLAP) nameCost = WORD_POOL_COST + (1 - overlap) * WORD_POOL_SPREAD;
      }
      if (nameCost === undefined) continue;
      scored.push({ entry, nameCost, cost: nameCost - (fit === undefined ? 0 : ARGUMENT_WEIGHT * fit.score), distance, reordered });
    }
    const byName = [...scored].sort((a, b) => a.nameCost - b.nameCost || a.distance - b.distance || a.entry.index - b.entry.index);
    scored.sort((a, b) => a.cost - b.cost || a.distance - b.distance || a.entry.index - b.entry.index);
    const result = suggestions(scored.map((item) => item.entry.name));
    const top = scored[0];
    if (top === undefined) return result;
    if (top.reordered) return { ...result, reason: 'the same words in another order' };
    if (argumentNames !== undefined && byName[0]?.entry !== top.entry) {
      const reason = takesReason(argumentNames, top.entry);
      if (reason !== undefined) return { ...result, reason };
    }
    return result;
  }

  /**
   * A spelling match, unless the arguments make it ambiguous: when another tool has the same words
   * as the request or the match (in another order: `entropy_change.calculate` for
   * `calculate_entropy_change`) and takes any of the arguments, or — for a match on a dropped
   * namespace — another name ends with the request's last part and takes the arguments at least as
   * well, nothing is run: both are suggested, the better-fitting one first (the match on a tie).
   */
  function guardMatch(name: string, argumentNames: readonly string[] | undefined, requestWordKey: string, suffix: string | undefined): ToolNameResolution {
    if (argumentNames === undefined) return resolvedName(name);
    const entry = prepared.find((candidate) => candidate.name === name);
    if (entry === undefined || entry.parameters === undefined) return resolvedName(name);
    const own = argumentFit(argumentNames, entry);
    let rival: PreparedName | undefined;
    let rivalScore = -1;
    for (const candidate of prepared) {
      const sameWords = candidate.wordKey === entry.wordKey || candidate.wordKey === requestWordKey;
      // a match on a dropped namespace: another name that ends with the request's last part competes
      const sameEnd = suffix !== undefined && suffix.length >= 4 && candidate.compact.endsWith(suffix);
      if (candidate === entry || (!sameWords && !sameEnd)) continue;
      const fit = argumentFit(argumentNames, candidate);
      if (fit.score > 0 && fit.score > rivalScore && (sameWords || fit.score >= own.score)) {
        rival = candidate;
        rivalScore = fit.score;
      }
    }
    if (rival === undefined) return resolvedName(name);
    const first = rivalScore > own.score ? rival : entry;
    const second = first === rival ? entry : rival;
    const reason = first === rival ? takesReason(argumentNames, rival) : undefined;
    return { closest: first.name, candidates: [first.name, second.name], ...(reason === undefined ? {} : { reason }) };
  }

  /** Equally good names reordered by how well they take the arguments (stable); the reason when that changed the first. */
  function weighed(names: readonly string[], argumentNames: readonly string[] | undefined): ToolNameResolution {
    if (argumentNames === undefined || names.length < 2) return suggestions(names);
    const entries = names.map((name, order) => {
      const entry = prepared.find((candidate) => candidate.name === name)!;
      return { entry, order, score: argumentFit(argumentNames, entry).score };
    });
    entries.sort((a, b) => b.score - a.score || a.order - b.order);
    const result = suggestions(entries.map((item) => item.entry.name));
    const top = entries[0]!;
    if (top.order === 0) return result;
    const reason = takesReason(argumentNames, top.entry);
    return reason === undefined ? result : { ...result, reason };
  }
}

/** A name followed by `(` and something other than `)`: call text. */
const CALL_TEXT_NAME = /^\s*[\p{L}_][\p{L}\p{N}_.:/-]*\s*\(\s*[^)\s]/u;
/** A call written inside call text: a name followed by `(`. */
const CALL_INSIDE = /[\p{L}_][\p{L}\p{N}_.]*\s*\(/u;
/** The cost of a suggestion whose words are the request's in another order. */
const REORDERED_COST = 0.05;
/** How much a perfect fit of the arguments lowers a suggestion's cost (a name cost is at most {@link MAX_SUGGESTION_COST}). */
const ARGUMENT_WEIGHT = 0.25;
/** Shared words (Jaccard) a name needs to be suggested on its arguments alone. */
const MIN_WORD_OVERLAP = 0.4;
/** Cost of a name suggested on shared words and fitting arguments: this plus up to {@link WORD_POOL_SPREAD} for fewer shared words. */
const WORD_POOL_COST = 0.3;
const WORD_POOL_SPREAD = 0.1;
/** Arguments weighed per call, and the longest argument text read for their names. */
const MAX_WEIGHED_ARGUMENTS = 64;
const MAX_ARGUMENT_TEXT = 65_536;

/** The call's arguments as an object (`args` an object or its JSON text); `undefined` when they are not one. */
function argumentsOf(args: unknown): Record<string, unknown> | undefined {
  let value = args;
  if (typeof value === 'string') {
    if (value.length > MAX_ARGUMENT_TEXT) return undefined;
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const object: Record<string, unknown> = {};
  let count = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    object[key] = (value as Record<string, unknown>)[key];
    count += 1;
    if (count >= MAX_WEIGHED_ARGUMENTS) break;
  }
  return object;
}

/** The top-level argument names of a call; `undefined` when there are none. */
function argumentNamesOf(value: Record<string, unknown>): string[] | undefined {
  const names: string[] = [];
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    names.push(key);
    if (names.length >= MAX_WEIGHED_ARGUMENTS) break;
  }
  return names.length === 0 ? undefined : names;
}

/**
 * How well a tool takes the arguments: the share of argument names it declares, times a factor
 * for the share of its required parameters present (0.6 + 0.4 × share). `complete` when every
 * argument is declared and every required parameter present. A tool of unknown parameters scores 0.5.
 */
function argumentFit(argumentNames: readonly string[], entry: PreparedName): { score: number; complete: boolean } {
  if (entry.parameters === undefined) return { score: 0.5, complete: false };
  let declared = 0;
  const present = new Set<string>();
  for (const name of argumentNames) {
    const compact = compactOf(name);
    if (entry.parameters.has(compact)) {
      declared += 1;
      present.add(compact);
    }
  }
  const declaredShare = declared / argumentNames.length;
  const requiredPresent = entry.required.filter((name) => present.has(name)).length;
  const requiredShare = entry.required.length === 0 ? 1 : requiredPresent / entry.required.length;
  return { score: declaredShare * (0.6 + 0.4 * requiredShare), complete: declaredShare === 1 && requiredShare === 1 };
}

/** `it takes "diameter"` (the argument names the tool declares, at most 3), or `undefined` when it declares none. */
function takesReason(argumentNames: readonly string[], entry: PreparedName): string | undefined {
  if (entry.parameters === undefined) return undefined;
  const declared = argumentNames.filter((name) => entry.parameters!.has(compactOf(name))).map((name) => entry.parameters!.get(compactOf(name))!);
  if (declared.length === 0) return undefined;
  const shown = declared.slice(0, 3).map((name) => JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name));
  return `it takes ${shown.join(', ')}${declared.length > 3 ? ', …' : ''}`;
}

/** Jaccard similarity of two word lists (as sets). */
function wordOverlap(a: readonly string[], b: readonly string[]): number {
  const left = new Set(a);
  const right = new Set(b);
  let shared = 0;
  for (const word of left) if (right.has(word)) shared += 1;
  const union = left.size + right.size - shared;
  return union === 0 ? 0 : shared / union;
}

/** The words of a name: lowercase, split at separators and camelCase humps. */
function wordsOf(name: string): string[] {
  return looseOf(name)
    .split('_')
    .filter((word) => word !== '');
}

/** What {@link resolveToolName} reads of a registry: its names, and each tool's advertised JSON Schema. */
export interface ToolNameRegistry {
  readonly names: readonly string[];
  get(name: string): { spec: { inputSchema: unknown } } | undefined;
}

const resolverCache = new WeakMap<object, { names: readonly string[]; resolve: ToolNameResolver }>();

/**
 * Resolves a requested tool name against a registry, weighing the call's arguments: built once
 * per registry (and again if its name list changes) from each tool's parameters, read from the
 * top-level `properties` and `required` of its schema (and of its `allOf`/`anyOf`/`oneOf` parts).
 * A tool whose schema declares no properties has unknown parameters.
 *
 * The rules of {@link createToolNameResolver} hold: `match` only for an unambiguous equivalent
 * spelling; the arguments only reorder suggestions (and may add one that shares words with the
 * request and takes exactly these arguments), so they never make a tool run.
 *
 * @param args - the call's arguments, an object or its JSON text; anything else weighs nothing.
 */
export function resolveToolName(requested: string, args: unknown, registry: ToolNameRegistry): ToolNameResolution {
  let cached = resolverCache.get(registry);
  if (cached === undefined || cached.names !== registry.names) {
    const entries = registry.names.map((name) => ({ name, ...parametersOf(registry.get(name)?.spec.inputSchema) }));
    cached = { names: registry.names, resolve: createToolNameResolver(entries) };
    resolverCache.set(registry, cached);
  }
  return cached.resolve(requested, args);
}

/** The top-level parameter names and required names of a JSON Schema; no `parameters` when it declares none. */
function parametersOf(schema: unknown): { parameters?: string[]; required?: string[]; types?: Record<string, string[]> } {
  const parameters = new Set<string>();
  const required = new Set<string>();
  const types: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  const visit = (part: unknown, depth: number): void => {
    if (typeof part !== 'object' || part === null || Array.isArray(part) || depth > 2) return;
    const record = part as Record<string, unknown>;
    if (typeof record.properties === 'object' && record.properties !== null) {
      for (const [key, property] of Object.entries(record.properties as Record<string, unknown>)) {
        parameters.add(key);
        const declared = typeof property === 'object' && property !== null ? (property as { type?: unknown }).type : undefined;
        const list =
          typeof declared === 'string' ? [declared] : Array.isArray(declared) ? declared.filter((type): type is string => typeof type === 'string') : [];
        // a parameter declared twice (in two branches) with different types accepts any of them; untyped in one: any
        if (Object.hasOwn(types, key)) types[key] = types[key]!.length === 0 || list.length === 0 ? [] : [...new Set([...types[key]!, ...list])];
        else types[key] = list;
      }
    }
    if (Array.isArray(record.required) && depth === 0) for (const key of record.required) if (typeof key === 'string') required.add(key);
    for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
      const branches = record[keyword];
      if (Array.isArray(branches)) for (const branch of branches) visit(branch, depth + 1);
    }
  };
  visit(schema, 0);
  return parameters.size === 0 ? {} : { parameters: [...parameters], required: [...required], types };
}

/** The wording of a `TOOL_NOT_FOUND` failure. */
export interface ToolNotFoundWording {
  message: string;
  detail: string;
  suggestion: string;
}

/**
 * Words a `TOOL_NOT_FOUND` failure from a resolution: the message names the unknown tool, the
 * detail lists the available ones and the closest (with the resolution's `reason`), the
 * suggestion says which tool to call instead. OpenAI's `multi_tool_use.parallel` wrapper gets its
 * own advice: make one tool call per tool.
 *
 * @param shownName - the requested name as the envelope may show it (redacted and bounded by the caller).
 * @param available - the listed tool names, already joined (`a, b, … (N more)`).
 */
export function describeToolNotFound(shownName: string, resolution: ToolNameResolution, available: string): ToolNotFoundWording {
  const message = `There is no tool named "${shownName}"`;
  if (isParallelWrapperName(shownName)) {
    return {
      message,
      detail: `"${shownName}" is a wrapper some models use for several calls at once; it is not a tool here. Available tools: ${available}.`,
      suggestion: `Do not wrap calls in "${shownName}": make one tool call per tool, each with its own name and arguments${resolution.closest ? ` (e.g. "${resolution.closest}" with its arguments)` : ''}.`,
    };
  }
  const closest = resolution.closest;
  if (closest !== undefined && resolution.nested !== undefined) {
    const where = resolution.nested === 'outer' ? 'The name holds a call written inside another call' : 'The arguments hold a call of another tool';
    return {
      message,
      detail: `Available tools: ${available}. ${where}: calls cannot be nested.`,
      suggestion: `Call "${closest}" on its own with plain values as its arguments; to use the result of one call in another, make the first call, read its result, then make the next call.`,
    };
  }
  const because = resolution.reason ? ` (${resolution.reason})` : '';
  return {
    message,
    detail: `Available tools: ${available}.${closest ? ` Did you mean "${closest}"${because}?` : ''}`,
    suggestion: closest
      ? `Call "${closest}"${because} instead if it does what you need, or another of the available tools.`
      : 'Call one of the available tools instead, or answer without a tool.',
  };
}

function resolvedName(name: string): ToolNameResolution {
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

function prepareName(name: string, index: number, described: ToolNameEntry | undefined): PreparedName {
  const compact = compactOf(name);
  const last = lastSegmentOf(name);
  const words = wordsOf(name);
  const parameters =
    described?.parameters === undefined ? undefined : new Map(described.parameters.map((parameter) => [compactOf(parameter), parameter] as const));
  const required = (described?.required ?? []).map(compactOf);
  return {
    shape: described?.parameters === undefined ? undefined : shapeOf(name, described.parameters, required, described.types),
    name,
    index,
    compact,
    loose: looseOf(name),
    last,
    namespaced: hasNamespace(name),
    compactBag: bagOf(compact),
    lastBag: bagOf(last),
    words,
    wordKey: [...words].sort().join(' '),
    parameters,
    required,
  };
}

/** A tool's parameters with their declared types, as {@link suggestByArguments} compares them. */
function shapeOf(name: string, parameters: readonly string[], required: string[], types: ToolNameEntry['types']): ArgumentShape {
  const typed = new Map<string, readonly string[]>();
  const declaredNames = new Map<string, string>();
  for (const parameter of parameters) {
    const declared = types !== undefined && Object.hasOwn(types, parameter) ? types[parameter] : undefined;
    typed.set(compactOf(parameter), declared === undefined ? [] : typeof declared === 'string' ? [declared] : declared);
    declaredNames.set(compactOf(parameter), parameter);
  }
  return { name, parameters: typed, declaredNames, required };
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

/** The requested name as the typo search reads it: compacted, its last segment, whether it has a namespace, their letter bags. */
interface RequestedName {
  compact: string;
  last: string;
  namespaced: boolean;
  compactBag: Int16Array;
  lastBag: Int16Array;
}

/**
 * The normalised cost of suggesting `entry` for the request (edits divided by the longer length,
 * plus a penalty for a wrong namespace), or `undefined` when it is too far to suggest.
 */
function suggestionCost(asked: RequestedName, entry: PreparedName, workspace: DistanceWorkspace): { cost: number; distance: number } | undefined {
  const { compact: requestCompact, last: requestLast, namespaced: requestNamespaced } = asked;
  let best: { cost: number; distance: number } | undefined;
  const consider = (cost: number, distance: number) => {
    if (cost <= MAX_SUGGESTION_COST && (best === undefined || cost < best.cost || (cost === best.cost && distance < best.distance))) {
      best = { cost, distance };
    }
  };
  // a typo anywhere
  const longest = Math.max(requestCompact.length, entry.compact.length);
  const budget = Math.floor(longest * MAX_SUGGESTION_COST);
  if (Math.abs(requestCompact.length - entry.compact.length) <= budget && bagDistance(asked.compactBag, entry.compactBag) <= budget) {
    const distance = boundedDistance(requestCompact, entry.compact, budget, workspace);
    if (distance <= budget) consider(distance / longest, distance);
  }
  // a wrong (or dropped, with a typo) namespace: compare the last segments
  if (entry.namespaced || requestNamespaced) {
    const lastLongest = Math.max(requestLast.length, entry.last.length);
    const lastBudget = Math.floor(lastLongest * (MAX_SUGGESTION_COST - NAMESPACE_PENALTY));
    if (Math.abs(requestLast.length - entry.last.length) <= lastBudget && bagDistance(asked.lastBag, entry.lastBag) <= lastBudget) {
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
