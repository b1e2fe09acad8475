/**
 * Redaction shared by every place a value leaves the runtime: the model-facing envelope, the
 * developer log, spans, tool-DLQ entries and failure records. Compiled once; applying it never
 * throws; the built-in rules run in time linear in their input (see `redact-scan.ts`).
 */
import { fitUtf8 } from '../ground/utf8.ts';
import { compileKeyMatcher, DEFAULT_SENSITIVE_KEYS } from './redact-keys.ts';
import { scanSecrets } from './redact-scan.ts';

/** Options of {@link createRedactor}. */
export interface RedactorOptions {
  /**
   * Sensitive property names whose values become the replacement, matched in normal form:
   * case-insensitive, with `-`, `_`, `.` and spaces ignored (`apiKey` = `api_key` = `API-KEY`),
   * `*` a wildcard (`password`, `*_token`, `api*key`). Replaces the default list for property names;
   * `name=value` pairs in free text are matched against these keys and the default list.
   * @defaultValue the built-in list: passwords, secrets, tokens, authorization headers, API and private keys, cookies, payment and identity numbers
   */
  keys?: readonly string[];
  /**
   * Extra value patterns to mask (made global), applied after the built-in rules to text already
   * cut to `maxScanBytes`. A backtracking pattern is only as fast as you write it: keep it linear.
   */
  patterns?: readonly RegExp[];
  /** Text that replaces a redacted value. @defaultValue `'***'` */
  replacement?: string;
  /**
   * Longest text scanned, in UTF-8 bytes: a longer text is cut to it before scanning (a secret cut
   * in half at the end is still masked) and marked with `…[cut before redaction]`. Callers that keep
   * less should cut first (e.g. `redactBounded`). @defaultValue 65_536
   */
  maxScanBytes?: number;
  /** Nesting depth `value` descends to; deeper values become `'[Too deep]'`. @defaultValue 32 */
  maxDepth?: number;
  /** Items kept of one array, `Set` or `Map`; the rest become one `'[… N more items]'` item. @defaultValue 1000 */
  maxItems?: number;
  /** Keys kept of one object; the rest become one `'…': '[N more keys]'` entry. @defaultValue 1000 */
  maxKeys?: number;
  /** Values (of any kind) visited by one `value` call; the rest become `'[Too many values]'`. @defaultValue 10_000 */
  maxNodes?: number;
  /** Text (strings and keys) scanned by one `value` call, in UTF-8 bytes; strings beyond it are cut and marked. @defaultValue 1_048_576 */
  maxValueBytes?: number;
}

/** Limits of one {@link Redactor.value} call, tighter than the redactor's own. */
export interface RedactValueLimits {
  /** Text (strings and keys) scanned by this call, in UTF-8 bytes. @defaultValue the redactor's `maxValueBytes` */
  maxTextBytes?: number;
}

/** A compiled redactor. */
export interface Redactor {
  /**
   * A bounded, JSON-safe deep copy of `value`: values of sensitive keys (the redactor's, plus
   * `extraKeys`, e.g. a tool's `sensitive` list) become the replacement, and every string — keys
   * included, so a secret used as a property name is masked too — goes through {@link Redactor.text}.
   * The value of a key in which a secret was masked becomes the replacement too (`{ "AKIA…": "<its
   * secret key>" }`: the value paired with a secret is one).
   * Cycles become `'[Circular]'`, values deeper than `maxDepth` `'[Too deep]'`, values whose getter
   * or Proxy trap throws `'[Unreadable]'`; BigInts become their decimal string, symbols their
   * description, functions `'[Function]'`, `Date`s ISO strings, `Map`s arrays of `[key, value]`,
   * `Set`s arrays, binary data `'[Uint8Array 12 bytes]'`, errors `{ name, message, … }`.
   * Never throws (if redaction itself fails, the result is the replacement).
   */
  value(value: unknown, extraKeys?: readonly string[], limits?: RedactValueLimits): unknown;
  /**
   * `text` with every built-in secret family masked (e-mail addresses,
   * `password=…`-style assignments, URL credentials and query secrets, JWTs, bearer and basic
   * tokens, API keys, AWS secret keys, PEM private keys, card numbers) and then the extra patterns.
   * Cut to `maxScanBytes` first. Linear in `min(text length, maxScanBytes)` for the built-in rules.
   * Never throws (if redaction itself fails, the result is the replacement).
   */
  text(text: string): string;
  /**
   * Whether a property name is sensitive for this redactor (its keys, in normal form) or is one of
   * `extraKeys`. Optional so that hand-written redactors stay valid; `createRedactor` has it.
   */
  isSensitiveKey?(key: string, extraKeys?: readonly string[]): boolean;
}

/** A call id or trace id as the runtime generates them: lowercase hex, glued to letters (no card number starts there). */
const GENERATED_ID = /^(?:call_)?[0-9a-f]{32}$/;

/** Appended to a text cut to `maxScanBytes` before scanning. */
export const TEXT_CUT_MARKER = '…[cut before redaction]';

/** What `value` puts in place of what it does not copy. */
export const REDACTION_MARKERS = {
  circular: '[Circular]',
  tooDeep: '[Too deep]',
  tooMany: '[Too many values]',
  unreadable: '[Unreadable]',
  function: '[Function]',
} as const;

/** Longest key kept by `value`, in UTF-8 bytes (longer keys are cut and marked). */
const MAX_KEY_BYTES = 1024;

/** `text` with `ranges` (`[start, end, …]`, sorted, disjoint) replaced. */
function applyRanges(text: string, ranges: readonly number[], replacement: string): string {
  let out = '';
  let position = 0;
  for (let index = 0; index < ranges.length; index += 2) {
    out += text.slice(position, ranges[index]) + replacement;
    position = ranges[index + 1]!;
  }
  return out + text.slice(position);
}

function describeBinary(node: object): string | undefined {
  if (ArrayBuffer.isView(node)) return `[${node.constructor?.name ?? 'ArrayBufferView'} ${node.byteLength} bytes]`;
  if (node instanceof ArrayBuffer) return `[ArrayBuffer ${node.byteLength} bytes]`;
  if (typeof SharedArrayBuffer !== 'undefined' && node instanceof SharedArrayBuffer) return `[SharedArrayBuffer ${node.byteLength} bytes]`;
  return undefined;
}

const UNREAD = Symbol('unreadable');
const ERROR_OWN_KEYS: ReadonlySet<string> = new Set(['name', 'message', 'stack']);

/** What a {@link ValueWalker} needs from its redactor. */
interface WalkSettings {
  replacement: string;
  maxScanBytes: number;
  maxDepth: number;
  maxItems: number;
  maxKeys: number;
  maxNodes: number;
  maxValueBytes: number;
  isSensitive(key: string): boolean;
  /** Redacts a text cut to `maxBytes`: the redacted text and the bytes it scanned. */
  redactWithin(input: string, maxBytes: number): { out: string; bytes: number };
  /** Keys seen clean before (short ones only): most objects repeat the same few keys. */
  cleanKeys: Set<string>;
}

/** One `value` call's walk: a bounded, JSON-safe, redacted deep copy (see {@link Redactor.value}). */
class ValueWalker {
  private nodes = 0;
  private bytes = 0;
  private extra: { matches(key: string): boolean } | undefined;
  private readonly ancestors = new Set<object>();
  /** Next suffix per key that two names redacted to (`*** (2)`), per object being built. */
  private suffixes: Map<string, number> | undefined;

  constructor(private readonly settings: WalkSettings) {}

  run(input: unknown, extra: { matches(key: string): boolean } | undefined, maxTextBytes: number | undefined): unknown {
    this.nodes = this.settings.maxNodes;
    this.bytes = Math.max(0, Math.min(this.settings.maxValueBytes, maxTextBytes ?? this.settings.maxValueBytes));
    this.extra = extra;
    return this.walk(input, 0);
  }

  reset(): void {
    this.ancestors.clear();
    this.extra = undefined;
    this.suffixes = undefined;
  }

  private sensitive(key: string): boolean {
    return this.settings.isSensitive(key) || (this.extra !== undefined && this.extra.matches(key));
  }

  private string(input: string): string {
    if (input.length === 0) return input;
    if (this.bytes <= 0) return TEXT_CUT_MARKER;
    const { out, bytes } = this.settings.redactWithin(input, Math.min(this.settings.maxScanBytes, this.bytes));
    this.bytes -= bytes;
    return out;
  }

  // Keys are always scanned (each bounded, their number bounded): a key is never replaced by the budget's marker.
  private key(name: string): string {
    const { cleanKeys } = this.settings;
    if (cleanKeys.has(name)) {
      this.bytes -= name.length;
      return name;
    }
    const { out, bytes } = this.settings.redactWithin(name, MAX_KEY_BYTES);
    this.bytes -= bytes;
    if (out === name && name.length <= 64 && cleanKeys.size < 10_000) cleanKeys.add(name);
    return out;
  }

  /** Whether `redacted`, what {@link ValueWalker.key} made of `name`, masked a secret in it (not only cut it). */
  private static maskedKey(name: string, redacted: string): boolean {
    if (redacted === name) return false;
    if (!redacted.endsWith(TEXT_CUT_MARKER)) return true;
    return !name.startsWith(redacted.slice(0, redacted.length - TEXT_CUT_MARKER.length));
  }

  // Two keys that redact to the same text (two secrets as names) are kept apart: `*** (2)`.
  private put(out: Record<string, unknown>, name: string, child: unknown): void {
    let unique = name;
    if (Object.prototype.hasOwnProperty.call(out, unique)) {
      this.suffixes ??= new Map();
      let suffix = this.suffixes.get(name) ?? 2;
      while (Object.prototype.hasOwnProperty.call(out, (unique = `${name} (${suffix})`))) suffix += 1;
      this.suffixes.set(name, suffix + 1);
    }
    if (unique === '__proto__') Object.defineProperty(out, unique, { value: child, enumerable: true, writable: true, configurable: true });
    else out[unique] = child;
  }

  private array(items: ArrayLike<unknown>, depth: number): unknown[] {
    const size = items.length;
    const keep = Math.min(size, this.settings.maxItems);
    const out: unknown[] = [];
    for (let index = 0; index < keep; index += 1) {
      let item: unknown;
      try {
        item = items[index];
      } catch {
        item = UNREAD;
      }
      out.push(item === UNREAD ? REDACTION_MARKERS.unreadable : this.walk(item, depth + 1));
    }
    if (size > keep) out.push(`[… ${size - keep} more items]`);
    return out;
  }

  private iterable(items: Iterable<unknown>, size: number, depth: number, pairs: boolean): unknown[] {
    const keep = Math.min(size, this.settings.maxItems);
    const out: unknown[] = [];
    for (const item of items) {
      if (out.length >= keep) break;
      if (pairs) {
        const [entryKey, entryValue] = item as [unknown, unknown];
        const redactedKey = this.walk(entryKey, depth + 1);
        const masked =
          typeof entryKey === 'string' && (this.sensitive(entryKey) || (typeof redactedKey === 'string' && ValueWalker.maskedKey(entryKey, redactedKey)));
        out.push([redactedKey, masked ? this.settings.replacement : this.walk(entryValue, depth + 1)]);
      } else out.push(this.walk(item, depth + 1));
    }
    if (size > out.length) out.push(`[… ${size - out.length} more items]`);
    return out;
  }

  private entries(node: object, out: Record<string, unknown>, depth: number, skip?: ReadonlySet<string>): Record<string, unknown> {
    const names = Object.keys(node);
    const keep = Math.min(names.length, this.settings.maxKeys);
    for (let index = 0; index < keep; index += 1) {
      const name = names[index]!;
      if (skip?.has(name)) continue;
      const redactedName = this.key(name);
      // a secret used as a name (an access key id) masks its value too: the secret paired with it
      if (this.sensitive(name) || ValueWalker.maskedKey(name, redactedName)) {
        this.put(out, redactedName, this.settings.replacement);
        continue;
      }
      let child: unknown;
      try {
        child = (node as Record<string, unknown>)[name];
      } catch {
        child = UNREAD;
      }
      this.put(out, redactedName, child === UNREAD ? REDACTION_MARKERS.unreadable : this.walk(child, depth + 1));
    }
    if (names.length > keep) this.put(out, '…', `[${names.length - keep} more keys]`);
    return out;
  }

  private object(node: object, depth: number): unknown {
    if (Array.isArray(node)) return this.array(node, depth);
    const prototype: unknown = Object.getPrototypeOf(node);
    if ((prototype === Object.prototype || prototype === null) && typeof (node as { toJSON?: unknown }).toJSON !== 'function')
      return this.entries(node, {}, depth);
    const binary = describeBinary(node);
    if (binary !== undefined) return binary;
    if (node instanceof Date) return Number.isNaN(node.getTime()) ? 'Invalid Date' : node.toISOString();
    if (node instanceof Map) return this.iterable(node.entries(), node.size, depth, true);
    if (node instanceof Set) return this.iterable(node.values(), node.size, depth, false);
    if (node instanceof RegExp) return this.string(String(node));
    if (node instanceof String || node instanceof Number || node instanceof Boolean) return this.walk(node.valueOf(), depth + 1);
    if (node instanceof Error) {
      const out: Record<string, unknown> = {};
      this.put(out, 'name', this.walk(node.name, depth + 1));
      this.put(out, 'message', this.walk(node.message, depth + 1));
      this.entries(node, out, depth, ERROR_OWN_KEYS);
      if (Object.prototype.hasOwnProperty.call(node, 'cause') && !Object.prototype.propertyIsEnumerable.call(node, 'cause'))
        out.cause = this.walk(node.cause, depth + 1);
      return out;
    }
    const toJSON = (node as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      const json: unknown = toJSON.call(node, '');
      if (json !== node) return this.walk(json, depth + 1);
    }
    return this.entries(node, {}, depth);
  }

  walk(node: unknown, depth: number): unknown {
    this.nodes -= 1;
    if (this.nodes < 0) return REDACTION_MARKERS.tooMany;
    switch (typeof node) {
      case 'string':
        return this.string(node);
      case 'number': {
        // A card number sent as a JSON number.
        if (Number.isSafeInteger(node) && Math.abs(node) >= 1e12) {
          const digits = String(node);
          return this.string(digits) === digits ? node : this.settings.replacement;
        }
        return node;
      }
      case 'boolean':
      case 'undefined':
        return node;
      case 'bigint':
      case 'symbol':
        return this.string(node.toString());
      case 'function':
        return REDACTION_MARKERS.function;
      default:
        break;
    }
    if (node === null) return null;
    if (depth >= this.settings.maxDepth) return REDACTION_MARKERS.tooDeep;
    const container = node as object;
    if (this.ancestors.has(container)) return REDACTION_MARKERS.circular;
    this.ancestors.add(container);
    const suffixes = this.suffixes;
    this.suffixes = undefined;
    try {
      return this.object(container, depth);
    } catch {
      return REDACTION_MARKERS.unreadable;
    } finally {
      this.ancestors.delete(container);
      this.suffixes = suffixes;
    }
  }
}

/**
 * Compiles a redactor.
 *
 * @example
 * ```ts
 * createRedactor({ keys: ['passport_number'] }).value({ email: 'a@b.co' }); // { email: '***' }
 * ```
 */
export function createRedactor(options: RedactorOptions = {}): Redactor {
  const replacement = options.replacement ?? '***';
  const maxScanBytes = Math.max(0, options.maxScanBytes ?? 65_536);
  const maxDepth = Math.max(0, options.maxDepth ?? 32);
  const maxItems = Math.max(0, options.maxItems ?? 1000);
  const maxKeys = Math.max(0, options.maxKeys ?? 1000);
  const maxNodes = Math.max(1, options.maxNodes ?? 10_000);
  const maxValueBytes = Math.max(0, options.maxValueBytes ?? 1_048_576);
  const configured = compileKeyMatcher(options.keys ?? DEFAULT_SENSITIVE_KEYS);
  const defaults = options.keys === undefined ? configured : compileKeyMatcher(DEFAULT_SENSITIVE_KEYS);
  const isSensitiveKey =
    defaults === configured ? configured.matchesNormal : (normal: string) => configured.matchesNormal(normal) || defaults.matchesNormal(normal);
  const patterns = (options.patterns ?? []).map((pattern) => new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`));
  const scanOptions = { isSensitiveKey, openEnd: false };
  const cutScanOptions = { isSensitiveKey, openEnd: true };

  /** Redacts `input` cut to `maxBytes`: the redacted text and the bytes it scanned. */
  const redactWithin = (input: string, maxBytes: number): { out: string; bytes: number } => {
    const { units, bytes } = fitUtf8(input, maxBytes);
    const cut = units < input.length;
    const scanned = cut ? input.slice(0, units) : input;
    const { ranges } = scanSecrets(scanned, cut ? cutScanOptions : scanOptions);
    let out = ranges.length === 0 ? scanned : applyRanges(scanned, ranges, replacement);
    for (const pattern of patterns) {
      pattern.lastIndex = 0;
      out = out.replace(pattern, replacement);
    }
    return { out: cut ? out + TEXT_CUT_MARKER : out, bytes };
  };

  const text = (input: string): string => {
    // The ids the runtime generates (`call_` and 32 lowercase hex digits, or the 32 digits alone)
    // hold nothing any built-in family matches: no family's prefix, separator or digit run fits.
    if (patterns.length === 0 && typeof input === 'string' && input.length <= 37 && GENERATED_ID.test(input)) return input;
    try {
      return redactWithin(typeof input === 'string' ? input : String(input), maxScanBytes).out;
    } catch {
      return replacement;
    }
  };

  // Extra keys (a tool's `sensitive` list) are compiled once per array, not once per call.
  const extraMatchers = new WeakMap<readonly string[], ReturnType<typeof compileKeyMatcher>>();
  const matcherFor = (keys: readonly string[]) => {
    let matcher = extraMatchers.get(keys);
    if (matcher === undefined) {
      matcher = compileKeyMatcher(keys);
      extraMatchers.set(keys, matcher);
    }
    return matcher;
  };

  const settings: WalkSettings = {
    replacement,
    maxScanBytes,
    maxDepth,
    maxItems,
    maxKeys,
    maxNodes,
    maxValueBytes,
    isSensitive: (key) => configured.matches(key),
    redactWithin,
    cleanKeys: new Set<string>(),
  };
  // One walker, reused; a second one only when `value` is re-entered (a getter or toJSON calling it).
  const idle: ValueWalker[] = [];

  const value = (input: unknown, extraKeys?: readonly string[], limits?: RedactValueLimits): unknown => {
    const walker = idle.pop() ?? new ValueWalker(settings);
    try {
      const extra = extraKeys && extraKeys.length > 0 ? matcherFor(extraKeys) : undefined;
      return walker.run(input, extra, limits?.maxTextBytes);
    } catch {
      return replacement;
    } finally {
      walker.reset();
      if (idle.length < 4) idle.push(walker);
    }
  };

  const isSensitiveKeyName = (key: string, extraKeys?: readonly string[]): boolean => {
    try {
      return configured.matches(key) || (extraKeys !== undefined && extraKeys.length > 0 && matcherFor(extraKeys).matches(key));
    } catch {
      return false;
    }
  };

  return { value, text, isSensitiveKey: isSensitiveKeyName };
}
