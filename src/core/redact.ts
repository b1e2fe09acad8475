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
  /**
   * A deep copy of `value` with sensitive keys and secret-looking strings masked. Cycles become
   * `'[Circular]'`. `extraKeys` (e.g. a tool's `sensitive` list) are compiled once per array object.
   */
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

/**
 * A built-in value pattern and a cheap test that holds whenever the pattern can match (a literal
 * every match contains), so text without it skips the pattern. Most text has no secret: this keeps
 * redaction of clean text to a few `includes` instead of ten regular-expression scans.
 */
interface SecretRule {
  pattern: RegExp;
  mayMatch: (text: string) => boolean;
}

const SECRET_RULES: readonly SecretRule[] = [
  { pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, mayMatch: (text) => text.includes('@') },
  { pattern: /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*/gi, mayMatch: (text) => /bearer|basic/i.test(text) },
  { pattern: /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}/g, mayMatch: (text) => text.includes('sk-') },
  { pattern: /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}/g, mayMatch: (text) => text.includes('gh') },
  { pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, mayMatch: (text) => text.includes('xox') },
  { pattern: /\bAKIA[0-9A-Z]{16}\b/g, mayMatch: (text) => text.includes('AKIA') },
  { pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, mayMatch: (text) => text.includes('AIza') },
  { pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, mayMatch: (text) => text.includes('eyJ') },
  { pattern: /([?&](?:api[_-]?key|key|token|access_token|secret|signature|sig|password)=)[^&#\s"']+/gi, mayMatch: (text) => text.includes('=') },
  { pattern: /(\/\/)[^/\s:@]+:[^/\s@]+@/g, mayMatch: (text) => text.includes('@') && text.includes('//') },
];

/** Built-in value patterns: e-mail addresses, bearer tokens, common API-key shapes, secrets in URL query strings. */
export const DEFAULT_SECRET_PATTERNS: readonly RegExp[] = SECRET_RULES.map((rule) => rule.pattern);

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
  const rules: SecretRule[] = [
    ...SECRET_RULES.map((rule) => ({ pattern: new RegExp(rule.pattern.source, rule.pattern.flags), mayMatch: rule.mayMatch })),
    ...(options.patterns ?? []).map((pattern) => ({ pattern: new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`), mayMatch: () => true })),
  ];

  const text = (input: string): string => {
    let output = input;
    for (const { pattern, mayMatch } of rules) {
      if (!mayMatch(output)) continue;
      pattern.lastIndex = 0;
      output = output.replace(pattern, (match: string, ...groups: unknown[]) => {
        const prefix = typeof groups[0] === 'string' && /^(?:[?&]|\/\/)/.test(groups[0]) ? groups[0] : '';
        return match === prefix ? match : `${prefix}${replacement}`;
      });
    }
    return output;
  };

  // Extra keys (a tool's `sensitive` list) are compiled once per array, not once per call.
  const extraMatchers = new WeakMap<readonly string[], (key: string) => boolean>();
  const matcherFor = (keys: readonly string[]): ((key: string) => boolean) => {
    let matcher = extraMatchers.get(keys);
    if (matcher === undefined) {
      matcher = compileKeyMatcher(keys);
      extraMatchers.set(keys, matcher);
    }
    return matcher;
  };

  const value = (input: unknown, extraKeys?: readonly string[]): unknown => {
    const extra = extraKeys && extraKeys.length > 0 ? matcherFor(extraKeys) : undefined;
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
