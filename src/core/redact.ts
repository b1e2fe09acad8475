/**
 * Redaction shared by every place a value leaves the runtime: the developer log, tool-DLQ
 * entries, span attributes and the model-facing `detail`. Compiled once; applying it never throws.
 */

/** Options of {@link createRedactor}. */
export interface RedactorOptions {
  /**
   * Sensitive property names whose values become `***`, matched case-insensitively, with `*` as a
   * wildcard (`password`, `*_token`, `api*key`).
   * @defaultValue {@link DEFAULT_SENSITIVE_KEYS}
   */
  keys?: readonly string[];
  /** Extra value patterns to mask (global regular expressions), on top of the built-in ones. */
  patterns?: readonly RegExp[];
  /** Text that replaces a redacted value. @defaultValue `'***'` */
  replacement?: string;
}

/** A compiled redactor. */
export interface Redactor {
  /** A deep copy of `value` with sensitive keys and secret-looking strings masked. Cycles become `'[Circular]'`. */
  value(value: unknown, extraKeys?: readonly string[]): unknown;
  /** `text` with e-mail addresses, bearer tokens, API keys and URL credentials masked. */
  text(text: string): string;
}

/** Property names redacted by default. */
export const DEFAULT_SENSITIVE_KEYS: readonly string[] = [
  'password',
  'passwd',
  'secret',
  '*token',
  '*_token',
  'authorization',
  'api*key',
  'apikey',
  'cookie',
  'set-cookie',
  'private*key',
  'client_secret',
  'credit_card*',
  'card_number',
  'cvv',
  'ssn',
];

/** Built-in value patterns: e-mail addresses, bearer tokens, common API-key shapes, secrets in URL query strings. */
export const DEFAULT_SECRET_PATTERNS: readonly RegExp[] = [
  /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g,
  /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*/gi,
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}/g,
  /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /([?&](?:api[_-]?key|key|token|access_token|secret|signature|sig|password)=)[^&#\s"']+/gi,
  /(\/\/)[^/\s:@]+:[^/\s@]+@/g,
];

function compileKeyMatcher(keys: readonly string[]): (key: string) => boolean {
  const exact = new Set<string>();
  const wildcards: RegExp[] = [];
  for (const key of keys) {
    const lower = key.toLowerCase();
    if (lower.includes('*')) {
      const source = lower.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
      wildcards.push(new RegExp(`^${source}$`));
    } else {
      exact.add(lower);
    }
  }
  const cache = new Map<string, boolean>();
  return (key) => {
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const lower = key.toLowerCase();
    const result = exact.has(lower) || wildcards.some((pattern) => pattern.test(lower));
    if (cache.size < 10_000) cache.set(key, result);
    return result;
  };
}

/**
 * Compiles a redactor.
 *
 * @example createRedactor({ keys: ['passport_number'] }).value({ email: 'a@b.co' }) // { email: '***' }
 */
export function createRedactor(options: RedactorOptions = {}): Redactor {
  const replacement = options.replacement ?? '***';
  const isSensitive = compileKeyMatcher(options.keys ?? DEFAULT_SENSITIVE_KEYS);
  const patterns = [...DEFAULT_SECRET_PATTERNS, ...(options.patterns ?? [])].map(
    (pattern) => new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`),
  );

  const text = (input: string): string => {
    let output = input;
    for (const pattern of patterns) {
      pattern.lastIndex = 0;
      output = output.replace(pattern, (match: string, ...groups: unknown[]) => {
        const prefix = typeof groups[0] === 'string' && /^(?:[?&]|\/\/)/.test(groups[0]) ? groups[0] : '';
        return match === prefix ? match : `${prefix}${replacement}`;
      });
    }
    return output;
  };

  const value = (input: unknown, extraKeys?: readonly string[]): unknown => {
    const extra = extraKeys && extraKeys.length > 0 ? compileKeyMatcher(extraKeys) : undefined;
    const seen = new WeakSet<object>();
    const walk = (node: unknown): unknown => {
      if (typeof node === 'string') return text(node);
      if (node === null || typeof node !== 'object') return node;
      if (seen.has(node)) return '[Circular]';
      seen.add(node);
      if (Array.isArray(node)) return node.map(walk);
      const output: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        output[key] = isSensitive(key) || extra?.(key) ? replacement : walk(child);
      }
      return output;
    };
    return walk(input);
  };

  return { value, text };
}
