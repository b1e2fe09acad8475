/**
 * Sensitive property names: the default list, their normal form and a compiled matcher.
 *
 * A key and a pattern are compared in normal form: lower case, with `-`, `_`, `.` and spaces
 * removed, so `apiKey`, `api_key`, `API-KEY` and `api.key` are one key. `*` in a pattern stands for
 * any run of characters (also none). Matching is linear in the key's length.
 */

/**
 * Property names redacted by default (also the names recognised in `name=value` / `name: value`
 * pairs of free text). Matched in normal form, `*` a wildcard.
 */
export const DEFAULT_SENSITIVE_KEYS: readonly string[] = [
  // passwords
  'password',
  'passwd',
  'pwd',
  'pass',
  'passphrase',
  '*_password',
  '*_passwd',
  '*_passphrase',
  // secrets
  'secret',
  '*_secret',
  'client_secret',
  'secret_key',
  '*_secret_key',
  'secret_access_key',
  'aws_secret_access_key',
  '*_secret_access_key',
  // tokens
  'token',
  '*_token',
  'access_token',
  'refresh_token',
  'session_token',
  'id_token',
  // authorization
  'auth',
  'basic_auth',
  'authorization',
  'proxy-authorization',
  'credentials',
  'credential',
  '*_credentials',
  // keys
  'api*key',
  'api-key',
  'x-api-key',
  '*_api_key',
  'access_key',
  '*_access_key',
  '*_access_key_id',
  'private*key',
  'private_key',
  '*_private_key',
  '*_auth_key',
  '*_signing_key',
  '*_encryption_key',
  'master_key',
  // cookies
  'cookie',
  'set-cookie',
  '*_cookie',
  // payment and identity
  'credit_card*',
  'card_number',
  '*_card_number',
  'cvv',
  'cvv2',
  'cvc',
  'ssn',
];

/** Keys longer than this (in code units) are never sensitive by name: no key name is that long. */
export const MAX_KEY_NAME_LENGTH = 256;

/**
 * The normal form of a key: ASCII lower case, without `-`, `_`, `.` and spaces (`X-Api-Key` →
 * `xapikey`, `secretAccessKey` → `secretaccesskey`). Non-ASCII letters are lower-cased too.
 */
export function normaliseKey(key: string): string {
  let ascii = true;
  let plain = true;
  for (let index = 0; index < key.length; index += 1) {
    const unit = key.charCodeAt(index);
    if (unit >= 0x80) ascii = false;
    else if (unit === 45 || unit === 95 || unit === 46 || unit === 32 || (unit >= 65 && unit <= 90)) plain = false;
  }
  if (plain && ascii) return key;
  let out = '';
  for (let index = 0; index < key.length; index += 1) {
    const unit = key.charCodeAt(index);
    if (unit === 45 || unit === 95 || unit === 46 || unit === 32) continue;
    out += unit >= 65 && unit <= 90 ? String.fromCharCode(unit + 32) : key[index];
  }
  return ascii ? out : out.toLowerCase();
}

/** A `*` glob, compiled: the literal parts between stars. */
interface Glob {
  parts: string[];
  anchoredStart: boolean;
  anchoredEnd: boolean;
  minLength: number;
}

function compileGlob(pattern: string): Glob {
  const parts = pattern.split('*');
  return {
    parts,
    anchoredStart: !pattern.startsWith('*'),
    anchoredEnd: !pattern.endsWith('*'),
    minLength: parts.reduce((sum, part) => sum + part.length, 0),
  };
}

/** Greedy `*`-glob match (first part a prefix, last a suffix, middle parts leftmost in order): exact for `*`-only globs. */
function matchGlob(glob: Glob, key: string): boolean {
  if (key.length < glob.minLength) return false;
  const { parts } = glob;
  const first = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (!key.startsWith(first) || !key.endsWith(last)) return false;
  let position = first.length;
  const end = key.length - last.length;
  if (position > end) return false;
  for (let index = 1; index < parts.length - 1; index += 1) {
    const part = parts[index] ?? '';
    if (part === '') continue;
    const found = key.indexOf(part, position);
    if (found === -1 || found + part.length > end) return false;
    position = found + part.length;
  }
  return true;
}

/**
 * Compiles `keys` (patterns in any spelling, `*` a wildcard) into a predicate on a raw key name,
 * with a bounded cache of answers. Keys longer than {@link MAX_KEY_NAME_LENGTH} never match.
 */
export function compileKeyMatcher(keys: readonly string[]): { matches(rawKey: string): boolean; matchesNormal(normalKey: string): boolean } {
  const exact = new Set<string>();
  const globs: Glob[] = [];
  for (const key of keys) {
    if (typeof key !== 'string' || key.length === 0) continue;
    const normal = normaliseKey(key).replace(/\*+/g, '*');
    if (normal.includes('*')) globs.push(compileGlob(normal));
    else exact.add(normal);
  }
  const matchesNormal = (normal: string): boolean => {
    if (exact.has(normal)) return true;
    for (const glob of globs) if (matchGlob(glob, normal)) return true;
    return false;
  };
  const cache = new Map<string, boolean>();
  return {
    matchesNormal,
    matches(rawKey) {
      if (rawKey.length > MAX_KEY_NAME_LENGTH) return false;
      const cached = cache.get(rawKey);
      if (cached !== undefined) return cached;
      const result = matchesNormal(normaliseKey(rawKey));
      if (cache.size < 10_000) cache.set(rawKey, result);
      return result;
    },
  };
}
