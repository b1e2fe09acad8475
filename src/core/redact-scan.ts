/**
 * The built-in secret scanner behind the redactor: hand-written, one pass per family, each linear
 * in the length of the text. No built-in rule is a backtracking regular expression over an
 * unbounded run: a pass finds an anchor (`@`, `=`, `:`, `//`, `eyJ`, `sk-`, a digit, …) with a
 * native search whose work per position is constant, then expands left or right over a bounded
 * character class. Where two anchors could share a run, the pass resumes after the run (or reuses
 * the run's end it already measured), so no character is examined more than a small constant
 * number of times. `steps` counts the characters examined, native searches included, so tests can
 * check the growth without timing anything.
 */
import { EXAMPLE_EMAIL_ADDRESS } from '../schema/format-expectations.ts';

/** The secret families the scanner recognises. */
export type SecretFamily =
  'email' | 'credential-assignment' | 'url-credentials' | 'jwt' | 'auth-scheme' | 'api-key' | 'aws-secret-key' | 'private-key' | 'card-number';

/** Every family, in scan order. */
export const SECRET_FAMILIES: readonly SecretFamily[] = [
  'private-key',
  'credential-assignment',
  'url-credentials',
  'email',
  'jwt',
  'auth-scheme',
  'api-key',
  'aws-secret-key',
  'card-number',
];

/** What the scanner needs to know. */
export interface ScanOptions {
  /** Whether a key name in normal form (see `normaliseKey`) is sensitive, for `name=value` pairs. */
  isSensitiveKey(normalKey: string): boolean;
  /**
   * The text was cut at its end: a secret that reaches the end is masked even when what is left
   * of it is too short to be recognised whole. @defaultValue false
   */
  openEnd?: boolean;
}

/** One family's finding: the code units `[start, end)` to mask. */
export interface SecretSpan {
  family: SecretFamily;
  start: number;
  end: number;
}

/** The result of {@link scanSecrets}. */
export interface ScanResult {
  /** Disjoint, sorted ranges to mask: `[start0, end0, start1, end1, …]`, touching ranges merged. */
  ranges: number[];
  /** Characters examined (native searches included). At most a small constant times the length. */
  steps: number;
}

// ---------------------------------------------------------------------------------------------
// Character classes (ASCII only: every non-ASCII code unit is in no class).

const WORD = 1; // [A-Za-z0-9_]
const LOCAL = 2; // e-mail local part [A-Za-z0-9._%+-]
const DOMAIN = 4; // [A-Za-z0-9.-]
const B64URL = 8; // [A-Za-z0-9_-]
const TOKEN68 = 16; // [A-Za-z0-9-._~+/]
const KEY = 32; // key names [A-Za-z0-9_.-]
const UPPERNUM = 64; // [A-Z0-9]
const AWS = 128; // [A-Za-z0-9/+]
const ALNUM = 256; // [A-Za-z0-9]
const SLACK = 512; // [A-Za-z0-9-]

const CLASSES = new Uint16Array(128);
for (let unit = 0; unit < 128; unit += 1) {
  const char = String.fromCharCode(unit);
  let flags = 0;
  const upper = char >= 'A' && char <= 'Z';
  const lower = char >= 'a' && char <= 'z';
  const digit = char >= '0' && char <= '9';
  if (upper || lower || digit) flags |= WORD | LOCAL | DOMAIN | B64URL | TOKEN68 | KEY | AWS | ALNUM | SLACK;
  if (upper || digit) flags |= UPPERNUM;
  if (char === '_') flags |= WORD | LOCAL | B64URL | TOKEN68 | KEY;
  if (char === '.') flags |= LOCAL | DOMAIN | TOKEN68 | KEY;
  if (char === '-') flags |= LOCAL | DOMAIN | B64URL | TOKEN68 | KEY | SLACK;
  if (char === '%') flags |= LOCAL;
  if (char === '+') flags |= LOCAL | TOKEN68 | AWS;
  if (char === '/') flags |= TOKEN68 | AWS;
  if (char === '~') flags |= TOKEN68;
  CLASSES[unit] = flags;
}

function inClass(unit: number, flag: number): boolean {
  return unit < 128 && (CLASSES[unit]! & flag) !== 0;
}

function isDigit(unit: number): boolean {
  return unit >= 48 && unit <= 57;
}

function isLetter(unit: number): boolean {
  return (unit >= 65 && unit <= 90) || (unit >= 97 && unit <= 122);
}

function isSpace(unit: number): boolean {
  return unit === 32 || (unit >= 9 && unit <= 13);
}

/** One scan: its text, and the work counter its steps share. */
interface Counter {
  readonly text: string;
  steps: number;
}

/** `text.indexOf(needle, from)`, counting the characters it passed. */
function find(text: string, needle: string, from: number, counter: Counter): number {
  const found = text.indexOf(needle, from);
  counter.steps += (found === -1 ? text.length : found) - from + 1;
  return found;
}

/** The end of the run of `flag` characters of the scan's text starting at `from` (at most `limit`). */
function runEnd(counter: Counter, from: number, limit: number, flag: number): number {
  const text = counter.text;
  let index = from;
  while (index < limit && inClass(text.charCodeAt(index), flag)) index += 1;
  counter.steps += index - from + 1;
  return index;
}

/**
 * Adds `[start, end)` to a family's sorted, disjoint list: a range that starts before the last one
 * swallows it (a later finding can only cover earlier ones of the same family).
 */
function addRange(ranges: number[], start: number, end: number): void {
  if (end <= start) return;
  while (ranges.length > 0 && ranges[ranges.length - 2]! >= start) {
    end = Math.max(end, ranges[ranges.length - 1]!);
    ranges.length -= 2;
  }
  if (ranges.length > 0 && ranges[ranges.length - 1]! >= start) {
    ranges[ranges.length - 1] = Math.max(ranges[ranges.length - 1]!, end);
    return;
  }
  ranges.push(start, end);
}

// ---------------------------------------------------------------------------------------------
// Families

/**
 * True when `text.slice(start, end)` is exactly the address toolrun's own messages give as the
 * example of an e-mail field ({@link EXAMPLE_EMAIL_ADDRESS}): it is nobody's data, and masking it
 * would leave the model with `e.g. ***`.
 */
function isToolrunExample(text: string, start: number, end: number): boolean {
  return end - start === EXAMPLE_EMAIL_ADDRESS.length && text.startsWith(EXAMPLE_EMAIL_ADDRESS, start);
}

/**
 * `local@domain.tld`: anchored on `@`, left over the local-part class, right over the domain class
 * (toolrun's own example address excepted).
 * Neither class holds `@`, so the runs read around two `@`s never overlap: each character is read
 * at most twice, however long the runs are.
 */
function scanEmails(text: string, openEnd: boolean, out: number[], counter: Counter): void {
  const length = text.length;
  for (let from = 0; ;) {
    const at = find(text, '@', from, counter);
    if (at === -1) return;
    from = at + 1;
    let start = at;
    while (start > 0 && inClass(text.charCodeAt(start - 1), LOCAL)) start -= 1;
    counter.steps += at - start;
    if (start === at) continue;
    const limit = length;
    let index = at + 1;
    let dot = -1;
    let letters = 0;
    let end = -1;
    for (; index < limit; index += 1) {
      const unit = text.charCodeAt(index);
      if (!inClass(unit, DOMAIN)) break;
      if (unit === 46) {
        dot = index > at + 1 ? index : -1;
        letters = 0;
      } else if (dot !== -1 && isLetter(unit)) {
        letters += 1;
        if (letters >= 2) end = index + 1;
      } else dot = -1;
    }
    counter.steps += index - at;
    if (openEnd && index === length && index > at + 1) end = length;
    if (end !== -1 && !isToolrunExample(text, start, end)) addRange(out, start, end);
  }
}

/** Keys of URL query parameters that are secrets even though they are not sensitive property names. */
const QUERY_KEYS: ReadonlySet<string> = new Set(['key', 'sig', 'signature', 'xamzsignature', 'xamzcredential', 'xgoogsignature', 'code', 'accesskey']);
/** Keys whose unquoted value after `:` runs to the end of the line (an HTTP header value). */
const HEADER_KEYS: ReadonlySet<string> = new Set(['authorization', 'proxyauthorization', 'cookie', 'setcookie', 'xapikey', 'apikey']);
/** Longest key name read to the left of a separator, and longest value masked after it. */
const MAX_ASSIGNMENT_KEY = 64;
const MAX_ASSIGNMENT_VALUE = 4096;

function endsUnquotedValue(unit: number, query: boolean): boolean {
  if (query) return unit === 38 || unit === 35 || unit === 34 || unit === 39 || isSpace(unit); // & # " ' and spaces, as in a URL
  switch (unit) {
    case 32:
    case 9:
    case 10:
    case 11:
    case 12:
    case 13:
    case 34: // "
    case 39: // '
    case 96: // `
    case 38: // &
    case 44: // ,
    case 59: // ;
    case 60: // <
    case 62: // >
    case 41: // )
    case 93: // ]
    case 125: // }
      return true;
    default:
      return false;
  }
}

/**
 * `name=value`, `name: value`, `"name": "value"`, `name := value`, `name => value`, and URL query
 * parameters `?name=value&…`, for sensitive names: anchored on `=` and `:`, the name read leftwards
 * (at most 64 key characters, optionally quoted), the value masked rightwards to its closing quote
 * or the first delimiter (at most 4,096 code units). The name stays, the value becomes the mask.
 */
function scanAssignments(text: string, isSensitiveKey: (normal: string) => boolean, out: number[], counter: Counter): void {
  const length = text.length;
  let nextEquals = find(text, '=', 0, counter);
  let nextColon = find(text, ':', 0, counter);
  let resume = 0;
  while (nextEquals !== -1 || nextColon !== -1) {
    let separator: number;
    if (nextColon === -1 || (nextEquals !== -1 && nextEquals < nextColon)) {
      separator = nextEquals;
      nextEquals = find(text, '=', Math.max(separator + 1, resume), counter);
    } else {
      separator = nextColon;
      nextColon = find(text, ':', Math.max(separator + 1, resume), counter);
    }
    if (separator < resume) continue;

    // The key, to the left: optional spaces, an optional closing quote (JSON, escaped JSON), key characters.
    let index = separator - 1;
    let spaces = 0;
    while (index >= 0 && spaces < 8 && (text.charCodeAt(index) === 32 || text.charCodeAt(index) === 9)) {
      index -= 1;
      spaces += 1;
    }
    if (index >= 0 && (text.charCodeAt(index) === 34 || text.charCodeAt(index) === 39)) {
      index -= 1;
      // JSON inside a JSON string (escaped once or more): \"name\":
      for (let slashes = 0; slashes < 8 && index >= 0 && text.charCodeAt(index) === 92; slashes += 1) index -= 1;
    }
    const keyEnd = index + 1;
    const keyFloor = Math.max(0, keyEnd - MAX_ASSIGNMENT_KEY);
    while (index >= keyFloor && inClass(text.charCodeAt(index), KEY)) index -= 1;
    const keyStart = index + 1;
    counter.steps += separator - keyStart + 1;
    if (keyStart === keyEnd) continue;
    if (keyStart === keyFloor && keyFloor > 0 && inClass(text.charCodeAt(keyFloor - 1), KEY)) continue;
    const before = keyStart > 0 ? text.charCodeAt(keyStart - 1) : -1;
    const query = before === 63 || before === 38; // ? or &
    const normal = normalKeyAt(text, keyStart, keyEnd);
    if (normal.length === 0 || !(isSensitiveKey(normal) || (query && QUERY_KEYS.has(normal)))) continue;

    // The value, to the right.
    let value = separator + 1;
    const isColon = text.charCodeAt(separator) === 58;
    if (!query && value < length && (text.charCodeAt(value) === 61 || text.charCodeAt(value) === 62)) value += 1; // :=  =>  ==
    spaces = 0;
    while (!query && value < length && spaces < 8 && (text.charCodeAt(value) === 32 || text.charCodeAt(value) === 9)) {
      value += 1;
      spaces += 1;
    }
    if (value >= length) continue;
    const first = text.charCodeAt(value);
    const cap = Math.min(length, value + MAX_ASSIGNMENT_VALUE);
    let start: number;
    let end: number;
    let slashes = 0;
    while (first === 92 && slashes < 8 && text.charCodeAt(value + slashes) === 92) slashes += 1;
    if (first === 34 || first === 39 || (slashes > 0 && text.charCodeAt(value + slashes) === 34)) {
      // A quoted value; in JSON escaped once or more (\"value\"), it ends at the next quote, its escaping backslashes left out.
      const escaped = slashes > 0;
      const quote = escaped ? 34 : first;
      start = value + slashes + 1;
      end = start;
      while (end < cap) {
        const unit = text.charCodeAt(end);
        if (unit === 10 || unit === 13 || unit === quote) break;
        if (unit === 92 && quote === 34 && !escaped) end += 1;
        end += 1;
      }
      end = Math.min(end, cap);
      if (escaped && end < cap) while (end > start && text.charCodeAt(end - 1) === 92) end -= 1;
    } else if (!query && (first === 123 || first === 91)) {
      continue; // { or [: a structure, whose own keys are scanned
    } else {
      const header = isColon && HEADER_KEYS.has(normal);
      start = value;
      end = value;
      while (end < cap) {
        const unit = text.charCodeAt(end);
        if (header ? unit === 10 || unit === 13 || unit === 34 : endsUnquotedValue(unit, query)) break;
        end += 1;
      }
    }
    counter.steps += end - separator;
    if (end > start) {
      addRange(out, start, end);
      resume = end;
    }
  }
}

/** {@link normaliseKey} of `text.slice(start, end)`, without the intermediate string for ASCII keys. */
function normalKeyAt(text: string, start: number, end: number): string {
  let out = '';
  for (let index = start; index < end; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit === 45 || unit === 95 || unit === 46) continue;
    out += String.fromCharCode(unit >= 65 && unit <= 90 ? unit + 32 : unit);
  }
  return out;
}

/** Longest authority examined after `//`. */
const MAX_AUTHORITY = 512;

/** `scheme://user:password@host`: the user information (up to the last `@` of the authority) is masked. */
function scanUrlCredentials(text: string, openEnd: boolean, out: number[], counter: Counter): void {
  const length = text.length;
  for (let from = 0; ;) {
    const slashes = find(text, '//', from, counter);
    if (slashes === -1) return;
    const start = slashes + 2;
    const limit = Math.min(length, start + MAX_AUTHORITY);
    let index = start;
    let lastAt = -1;
    let colon = -1;
    for (; index < limit; index += 1) {
      const unit = text.charCodeAt(index);
      // The authority ends at / ? # (RFC 3986), a space, a quote or an angle bracket (text around a URL).
      if (unit === 47 || unit === 63 || unit === 35 || isSpace(unit) || unit === 34 || unit === 39 || unit === 60 || unit === 62 || unit === 96) break;
      if (unit === 64) lastAt = index;
      else if (unit === 58 && colon === -1) colon = index;
    }
    counter.steps += index - start + 1;
    if (lastAt > start && colon !== -1 && colon < lastAt) addRange(out, start, lastAt);
    else if (openEnd && index === length && colon !== -1) addRange(out, start, length);
    from = index > start ? index : slashes + 1;
  }
}

/** `header.payload.signature` (base64url, the header starting `eyJ`), and the five parts of a JWE. */
function scanJwts(text: string, openEnd: boolean, out: number[], counter: Counter): void {
  const length = text.length;
  for (let from = 0; from < length;) {
    const start = find(text, 'eyJ', from, counter);
    if (start === -1) return;
    if (start > 0 && inClass(text.charCodeAt(start - 1), WORD)) {
      from = start + 1;
      continue;
    }
    const end1 = runEnd(counter, start, length, B64URL);
    from = end1;
    if (end1 - start < 11 || end1 >= length || text.charCodeAt(end1) !== 46) {
      if (openEnd && end1 === length && end1 - start >= 4) addRange(out, start, length);
      continue;
    }
    const end2 = runEnd(counter, end1 + 1, length, B64URL);
    if (openEnd && end2 === length) {
      addRange(out, start, length);
      return;
    }
    if (end2 - end1 - 1 < 8 || end2 >= length || text.charCodeAt(end2) !== 46) continue;
    const end3 = runEnd(counter, end2 + 1, length, B64URL);
    const unsigned = text.startsWith('eyJ', end1 + 1);
    if (end3 - end2 - 1 < 8 && !unsigned) {
      if (openEnd && end3 === length) addRange(out, start, length);
      continue;
    }
    let end = end3;
    // A JWE has five parts; a part starting `eyJ` is the header of the next token instead.
    for (let extra = 0; extra < 2 && end < length && text.charCodeAt(end) === 46 && !text.startsWith('eyJ', end + 1); extra += 1) {
      const next = runEnd(counter, end + 1, length, B64URL);
      if (next === end + 1) break;
      end = next;
    }
    addRange(out, start, end);
    from = end;
  }
}

/** `Bearer <token68>` and `Basic <base64>`, the scheme word included. Each attempt of the anchor is constant work. */
const AUTH_SCHEME_SEARCH = /\b(?:bearer|basic)\s/gi;

function scanAuthSchemes(text: string, openEnd: boolean, out: number[], counter: Counter): void {
  const length = text.length;
  const search = AUTH_SCHEME_SEARCH; // module-level: scans are synchronous and never nested
  for (let from = 0; from < length;) {
    search.lastIndex = from;
    const match = search.exec(text);
    if (match === null) {
      counter.steps += length - from;
      return;
    }
    counter.steps += match.index - from + match[0].length;
    let index = match.index + match[0].length;
    let spaces = 0;
    while (index < length && spaces < 16 && isSpace(text.charCodeAt(index))) {
      index += 1;
      spaces += 1;
    }
    const tokenStart = index;
    let end = runEnd(counter, tokenStart, length, TOKEN68);
    for (let pad = 0; pad < 3 && end < length && text.charCodeAt(end) === 61; pad += 1) end += 1;
    from = tokenStart;
    if (end === tokenStart) continue;
    const basic = (text.charCodeAt(match.index) | 32) === 98 && (text.charCodeAt(match.index + 1) | 32) === 97; // "ba"
    if (basic && !(openEnd && end === length) && !looksLikeCredential(text, tokenStart, end, counter)) continue;
    addRange(out, match.index, end);
    from = end;
  }
}

/** A `Basic` token: at least 4 characters, with a digit, `+`, `/`, `=` or an upper-case letter after the first (not an English word). */
function looksLikeCredential(text: string, start: number, end: number, counter: Counter): boolean {
  if (end - start < 4) return false;
  counter.steps += end - start;
  for (let index = start; index < end; index += 1) {
    const unit = text.charCodeAt(index);
    if (isDigit(unit) || unit === 43 || unit === 47 || unit === 61) return true;
    if (index > start && unit >= 65 && unit <= 90) return true;
  }
  return false;
}

/** API-key prefixes: each attempt of the anchor is constant work (literal alternatives). */
const API_KEY_ANCHOR = /\b(?:sk-|sk_live_|sk_test_|rk_live_|rk_test_|whsec_|gh[pousr]_|github_pat_|xox[abeprs]-|xapp-|AIza|AKIA|ASIA|glpat-|npm_)/g;

interface KeyShape {
  flag: number;
  minBody: number;
  /** The body has exactly `minBody` characters and no word character follows (AWS key ids). */
  exact?: boolean;
}

function keyShape(prefix: string): KeyShape {
  switch (prefix) {
    case 'sk-':
      return { flag: B64URL, minBody: 16 };
    case 'sk_live_':
    case 'sk_test_':
    case 'rk_live_':
    case 'rk_test_':
      return { flag: ALNUM, minBody: 10 };
    case 'whsec_':
      return { flag: ALNUM, minBody: 20 };
    case 'github_pat_':
      return { flag: WORD, minBody: 20 };
    case 'xapp-':
      return { flag: SLACK, minBody: 10 };
    case 'AIza':
      return { flag: B64URL, minBody: 30 };
    case 'AKIA':
    case 'ASIA':
      return { flag: UPPERNUM, minBody: 16, exact: true };
    case 'glpat-':
      return { flag: B64URL, minBody: 20 };
    case 'npm_':
      return { flag: ALNUM, minBody: 30 };
    default:
      if (prefix.startsWith('gh')) return { flag: WORD, minBody: 20 };
      return { flag: SLACK, minBody: 10 }; // xox?-
  }
}

/**
 * API keys by prefix: OpenAI `sk-`/`sk-proj-`, Anthropic `sk-ant-`, GitHub `ghp_`…/`github_pat_`,
 * Slack `xox?-`/`xapp-`, Google `AIza`, Stripe `sk_live_`/`rk_live_` (and test keys, `whsec_`),
 * AWS access key ids `AKIA`/`ASIA`, GitLab `glpat-`, npm `npm_`. A key's body is measured once
 * per character class: an anchor inside a body already measured reuses its end.
 */
function scanApiKeys(text: string, openEnd: boolean, out: number[], counter: Counter): void {
  const length = text.length;
  const search = API_KEY_ANCHOR; // module-level: scans are synchronous and never nested
  let measuredFrom: Map<number, number> | undefined;
  let measuredTo: Map<number, number> | undefined;
  for (let from = 0; from < length;) {
    search.lastIndex = from;
    const match = search.exec(text);
    if (match === null) {
      counter.steps += length - from;
      return;
    }
    measuredFrom ??= new Map();
    measuredTo ??= new Map();
    counter.steps += match.index - from + match[0].length;
    const prefix = match[0];
    const shape = keyShape(prefix);
    const bodyStart = match.index + prefix.length;
    const knownFrom = measuredFrom.get(shape.flag);
    const knownTo = measuredTo.get(shape.flag);
    let end: number;
    if (knownFrom !== undefined && knownTo !== undefined && bodyStart >= knownFrom && bodyStart <= knownTo) end = knownTo;
    else {
      end = runEnd(counter, bodyStart, length, shape.flag);
      measuredFrom.set(shape.flag, bodyStart);
      measuredTo.set(shape.flag, end);
    }
    const body = end - bodyStart;
    const complete = shape.exact ? body === shape.minBody && !(end < length && inClass(text.charCodeAt(end), WORD)) : body >= shape.minBody;
    const cutShort = openEnd && end === length && body >= 4 && (!shape.exact || body <= shape.minBody);
    if (complete || cutShort) {
      addRange(out, match.index, end);
      from = end;
      if (complete && shape.exact) from = Math.max(from, scanAwsSecretAfterKeyId(counter, end, openEnd, out));
    } else from = match.index + 1;
  }
}

/** Length of an AWS secret access key: 40 characters of `[A-Za-z0-9/+]`. */
const AWS_SECRET_LENGTH = 40;

/**
 * The secret access key written after its access key id (`AKIA… wJalr…`, `"AKIA…": "wJalr…"`,
 * `AKIA…:wJalr…`): past at most 24 separators (spaces, quotes, `=`, `:`, `,`, `>`, `\`), a run of
 * exactly 40 `[A-Za-z0-9/+]` characters, or, in a text cut short, a run that reaches the cut. Adds
 * its range and returns where it ends, or `from` when none follows. Bounded work: 65 characters.
 */
function scanAwsSecretAfterKeyId(counter: Counter, from: number, openEnd: boolean, out: number[]): number {
  const text = counter.text;
  const length = text.length;
  let index = from;
  const limit = Math.min(length, from + 24);
  while (index < limit) {
    const unit = text.charCodeAt(index);
    if (!(isSpace(unit) || unit === 34 || unit === 39 || unit === 61 || unit === 58 || unit === 62 || unit === 44 || unit === 92)) break;
    index += 1;
  }
  counter.steps += index - from;
  if (index === from) return from;
  const end = runEnd(counter, index, Math.min(length, index + AWS_SECRET_LENGTH + 1), AWS);
  const exact = end - index === AWS_SECRET_LENGTH && !(end < length && inClass(text.charCodeAt(end), AWS));
  const cutShort = openEnd && end === length && end > index && end - index <= AWS_SECRET_LENGTH;
  if (!exact && !cutShort) return from;
  addRange(out, index, end);
  return end;
}

/** AWS secret access keys by their name, in any separator style: `aws_secret_access_key = …`, `"SecretAccessKey": "…"`, `--aws-secret-access-key …`. */
const AWS_SECRET_ANCHOR = /secret[_\-. ]?access[_\-. ]?key/gi;

function scanAwsSecrets(text: string, openEnd: boolean, out: number[], counter: Counter): void {
  const length = text.length;
  const search = AWS_SECRET_ANCHOR; // module-level: scans are synchronous and never nested
  for (let from = 0; from < length;) {
    search.lastIndex = from;
    const match = search.exec(text);
    if (match === null) {
      counter.steps += length - from;
      return;
    }
    counter.steps += match.index - from + match[0].length;
    let index = match.index + match[0].length;
    const limit = Math.min(length, index + 24);
    while (index < limit) {
      const unit = text.charCodeAt(index);
      // spaces, quotes, = : > , \ (escaped quotes) between the name and the value
      if (!(isSpace(unit) || unit === 34 || unit === 39 || unit === 61 || unit === 58 || unit === 62 || unit === 44 || unit === 92)) break;
      index += 1;
    }
    const end = runEnd(counter, index, Math.min(length, index + 1024), AWS);
    if (end - index >= 16 || (openEnd && end === length && end > index)) addRange(out, index, end);
    from = Math.max(end, match.index + match[0].length);
  }
}

/** PEM private-key blocks, `-----BEGIN … PRIVATE KEY-----` to the matching END line; to the end of the text when it has none. */
function scanPrivateKeys(text: string, out: number[], counter: Counter): void {
  const length = text.length;
  for (let from = 0; ;) {
    const begin = find(text, '-----BEGIN ', from, counter);
    if (begin === -1) return;
    const labelStart = begin + 11;
    const labelEnd = pemLabelEnd(text, labelStart, counter);
    if (!text.slice(labelStart, labelEnd).includes('PRIVATE KEY')) {
      from = labelStart;
      continue;
    }
    const endLine = find(text, '-----END ', labelEnd, counter);
    if (endLine === -1) {
      addRange(out, begin, length);
      return;
    }
    let end = pemLabelEnd(text, endLine + 9, counter);
    if (text.startsWith('-----', end)) end += 5;
    addRange(out, begin, end);
    from = end;
  }
}

/** The end of a PEM label: the next `-` or line end, at most 80 code units on. */
function pemLabelEnd(text: string, from: number, counter: Counter): number {
  const limit = Math.min(text.length, from + 80);
  let index = from;
  while (index < limit) {
    const unit = text.charCodeAt(index);
    if (unit === 45 || unit === 10 || unit === 13) break;
    index += 1;
  }
  counter.steps += index - from + 1;
  return index;
}

/** Whether digits `digits` (first to last) are a card number: a known issuer prefix for the length, and the Luhn checksum. */
function isCardNumber(digits: readonly number[], count: number): boolean {
  const first = digits[0]!;
  const second = digits[1]!;
  let issuer: boolean;
  switch (first) {
    case 2:
      issuer = second >= 2 && second <= 7 && count >= 16; // Mastercard 2221-2720, Mir 2200-2204
      break;
    case 3:
      if (second === 4 || second === 7)
        issuer = count === 15; // American Express
      else if (second === 5)
        issuer = count >= 16; // JCB
      else issuer = (second === 0 || second === 6 || second === 8 || second === 9) && count >= 14; // Diners Club
      break;
    case 4: // Visa
    case 5: // Mastercard, Maestro
    case 6: // Discover, UnionPay, Maestro
      issuer = true;
      break;
    default:
      issuer = false;
  }
  if (!issuer) return false;
  let sum = 0;
  for (let index = count - 1, double = false; index >= 0; index -= 1, double = !double) {
    let digit = digits[index]!;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

const DIGIT_SEARCH = /[0-9]/g;
const GROUP_STARTS: number[] = [];
const GROUP_ENDS: number[] = [];
const DIGITS: number[] = new Array<number>(19).fill(0);

/**
 * Card numbers: 13–19 digits, written whole or in groups of 3–6 digits separated by one space or
 * dash, not glued to a letter, with a known issuer prefix and a valid Luhn checksum (so most order
 * numbers, epoch timestamps and hexadecimal ids are left alone). Digits are read once; for each group, only the windows of at most
 * 19 digits that end at it are checked.
 */
function scanCardNumbers(text: string, openEnd: boolean, out: number[], counter: Counter): void {
  const length = text.length;
  const search = DIGIT_SEARCH; // module-level: scans are synchronous and never nested
  const groupStarts = GROUP_STARTS;
  const groupEnds = GROUP_ENDS;
  for (let from = 0; from < length;) {
    search.lastIndex = from;
    const match = search.exec(text);
    if (match === null) {
      counter.steps += length - from;
      return;
    }
    counter.steps += match.index - from + 1;
    // A digit glued to a letter (hex ids, trace ids, words) starts no card number.
    if (match.index > 0 && isLetter(text.charCodeAt(match.index - 1))) {
      from = runEnd(counter, match.index, length, ALNUM);
      continue;
    }
    groupStarts.length = 0;
    groupEnds.length = 0;
    let groupStart = match.index;
    let sequenceEnd: number;
    for (;;) {
      let groupEnd = groupStart;
      while (groupEnd < length && isDigit(text.charCodeAt(groupEnd))) groupEnd += 1;
      counter.steps += groupEnd - groupStart + 1;
      // Keep the last 7 groups: a window of at most 19 digits in groups of 3 or more has at most 6.
      groupStarts.push(groupStart);
      groupEnds.push(groupEnd);
      if (groupStarts.length > 7) {
        groupStarts.shift();
        groupEnds.shift();
      }
      checkWindowsEndingAt(text, out, counter);
      const separator = text.charCodeAt(groupEnd);
      if (groupEnd + 1 < length && (separator === 32 || separator === 45) && isDigit(text.charCodeAt(groupEnd + 1))) {
        groupStart = groupEnd + 1;
        continue;
      }
      sequenceEnd = groupEnd;
      break;
    }
    if (openEnd && sequenceEnd === length) maskCutCardTail(text, out, counter);
    from = sequenceEnd;
  }
}

/** Adds the card number among the windows of groups that end at the last one (the card scan's buffers), when one is. */
function checkWindowsEndingAt(text: string, out: number[], counter: Counter): void {
  const starts = GROUP_STARTS;
  const ends = GROUP_ENDS;
  const last = starts.length - 1;
  // A digit glued to a letter ends no card number either.
  if (isLetter(text.charCodeAt(ends[last]!))) return;
  const lastLength = ends[last]! - starts[last]!;
  if (lastLength >= 13 && lastLength <= 19) {
    if (windowIsCard(text, last, last, counter)) addRange(out, starts[last]!, ends[last]!);
    return;
  }
  if (lastLength < 3 || lastLength > 6) return;
  let total = lastLength;
  let best = -1;
  for (let first = last - 1; first >= 0; first -= 1) {
    const groupLength = ends[first]! - starts[first]!;
    if (groupLength < 3 || groupLength > 6) break;
    total += groupLength;
    if (total > 19) break;
    if (total >= 13 && windowIsCard(text, first, last, counter)) best = first;
  }
  if (best !== -1) addRange(out, starts[best]!, ends[last]!);
}

/** Whether the digits of groups `first` to `last` (of the card scan's buffers) are a card number. */
function windowIsCard(text: string, first: number, last: number, counter: Counter): boolean {
  const starts = GROUP_STARTS;
  const ends = GROUP_ENDS;
  const digits = DIGITS;
  let position = 0;
  for (let group = first; group <= last; group += 1) {
    for (let index = starts[group]!; index < ends[group]!; index += 1) digits[position++] = text.charCodeAt(index) - 48;
  }
  counter.steps += position;
  return isCardNumber(digits, position);
}

/** A text cut inside a card number: its last digits (up to 19) are masked when there are 6 or more and the first is an issuer digit (2–6). */
function maskCutCardTail(text: string, out: number[], counter: Counter): void {
  const starts = GROUP_STARTS;
  const ends = GROUP_ENDS;
  let total = 0;
  let start = -1;
  for (let group = starts.length - 1; group >= 0; group -= 1) {
    const groupLength = ends[group]! - starts[group]!;
    if (total + groupLength > 19) {
      start = ends[group]! - (19 - total);
      total = 19;
      break;
    }
    total += groupLength;
    start = starts[group]!;
  }
  counter.steps += starts.length;
  const first = start === -1 ? 0 : text.charCodeAt(start);
  if (total >= 6 && first >= 50 && first <= 54) addRange(out, start, text.length);
}

// ---------------------------------------------------------------------------------------------

/**
 * Finds every secret of the built-in families in `text`. Linear in `text.length`: `steps` is at
 * most a small constant times the length (plus a constant).
 */
export function scanSecrets(text: string, options: ScanOptions): ScanResult {
  if (text.length <= QUICK_CHECK_UNITS && options.openEnd !== true && cannotHoldSecret(text)) return { ranges: [], steps: text.length + 1 };
  const counter: Counter = { text, steps: 0 };
  const lists = scanFamilies(text, options, counter);
  return { ranges: mergeRanges(lists, counter), steps: counter.steps };
}

/** Like {@link scanSecrets}, but each family's findings apart (for tests and diagnostics). */
export function scanSecretSpans(text: string, options: ScanOptions): SecretSpan[] {
  const counter: Counter = { text, steps: 0 };
  const lists = scanFamilies(text, options, counter);
  const spans: SecretSpan[] = [];
  lists.forEach((list, index) => {
    for (let at = 0; at < list.length; at += 2) spans.push({ family: SECRET_FAMILIES[index]!, start: list[at]!, end: list[at + 1]! });
  });
  return spans.sort((a, b) => a.start - b.start || a.end - b.end);
}

/** Texts up to this length are first checked for the characters every family needs. */
const QUICK_CHECK_UNITS = 256;

/**
 * True when `text` has none of the characters some family needs — `@ = : / . - _`, a digit, a
 * space or control character, anything outside ASCII (Unicode spaces) — and none of the letter-only anchors (`AIza`, `AKIA`, `ASIA`, `…access…`): no family can
 * match, so the passes are skipped (most short values: names, codes, words).
 */
function cannotHoldSecret(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit <= 32 || unit >= 127 || unit === 64 || unit === 61 || unit === 58 || unit === 47 || unit === 46 || unit === 45 || unit === 95 || isDigit(unit))
      return false;
  }
  return !(text.includes('AIza') || text.includes('AKIA') || text.includes('ASIA') || /ccess/i.test(text));
}

const HAS_AT = 1;
const HAS_EQUALS = 2;
const HAS_COLON = 4;
const HAS_SLASH = 8;
const HAS_DASH = 16;
const HAS_UNDERSCORE = 32;
const HAS_DOT = 64;
const HAS_SPACE = 128;
const HAS_DIGIT = 256;
const HAS_UPPER_A = 512;
const ALL_PRESENT = 1023;

/** Which of the characters the families need `text` holds (any non-ASCII unit counts as a space: `\s` is Unicode). */
function charactersPresent(text: string, counter: Counter): number {
  let present = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 48 && unit <= 57) present |= HAS_DIGIT;
    else if (unit <= 32 || unit >= 127) present |= HAS_SPACE;
    else if (unit === 64) present |= HAS_AT;
    else if (unit === 61) present |= HAS_EQUALS;
    else if (unit === 58) present |= HAS_COLON;
    else if (unit === 47) present |= HAS_SLASH;
    else if (unit === 45) present |= HAS_DASH;
    else if (unit === 95) present |= HAS_UNDERSCORE;
    else if (unit === 46) present |= HAS_DOT;
    else if (unit === 65) present |= HAS_UPPER_A;
  }
  counter.steps += text.length;
  return present;
}

/** Per-family lists, reused by every scan (scans are synchronous and never nested); results are copied out. */
const SCRATCH: number[][] = SECRET_FAMILIES.map(() => []);

function scanFamilies(text: string, options: ScanOptions, counter: Counter): number[][] {
  const openEnd = options.openEnd ?? false;
  const lists = SCRATCH;
  for (const list of lists) list.length = 0;
  // A short text is read once for the characters each family needs; families that cannot match are skipped.
  const present = text.length <= QUICK_CHECK_UNITS ? charactersPresent(text, counter) : ALL_PRESENT;
  if (present & HAS_DASH) scanPrivateKeys(text, lists[0]!, counter);
  if (present & (HAS_EQUALS | HAS_COLON)) scanAssignments(text, options.isSensitiveKey, lists[1]!, counter);
  if (present & HAS_SLASH) scanUrlCredentials(text, openEnd, lists[2]!, counter);
  if (present & HAS_AT) scanEmails(text, openEnd, lists[3]!, counter);
  if (present & (HAS_DOT | (openEnd ? ALL_PRESENT : 0))) scanJwts(text, openEnd, lists[4]!, counter);
  if (present & HAS_SPACE) scanAuthSchemes(text, openEnd, lists[5]!, counter);
  if (present & (HAS_DASH | HAS_UNDERSCORE | HAS_UPPER_A)) scanApiKeys(text, openEnd, lists[6]!, counter);
  scanAwsSecrets(text, openEnd, lists[7]!, counter);
  if (present & HAS_DIGIT) scanCardNumbers(text, openEnd, lists[8]!, counter);
  return lists;
}

/** K-way merge of sorted, disjoint range lists into one (overlapping and touching ranges joined). */
function mergeRanges(lists: readonly number[][], counter: Counter): number[] {
  let only: number[] | undefined;
  let count = 0;
  for (const list of lists) {
    if (list.length === 0) continue;
    count += 1;
    only = list;
  }
  if (only === undefined) return [];
  if (count === 1) return only.slice();
  const nonEmpty = lists.filter((list) => list.length > 0);
  const heads = nonEmpty.map(() => 0);
  const merged: number[] = [];
  for (;;) {
    let best = -1;
    for (let list = 0; list < nonEmpty.length; list += 1) {
      const head = heads[list]!;
      if (head < nonEmpty[list]!.length && (best === -1 || nonEmpty[list]![head]! < nonEmpty[best]![heads[best]!]!)) best = list;
    }
    counter.steps += 1;
    if (best === -1) return merged;
    const head = heads[best]!;
    const start = nonEmpty[best]![head]!;
    const end = nonEmpty[best]![head + 1]!;
    heads[best] = head + 2;
    if (merged.length > 0 && merged[merged.length - 1]! >= start) merged[merged.length - 1] = Math.max(merged[merged.length - 1]!, end);
    else merged.push(start, end);
  }
}
