import { RE2JS } from 're2js';
import { ToolrunError } from '../ground/toolrun-error.ts';

/**
 * Linear-time evaluation of the regular expressions of a JSON Schema (`pattern`,
 * `patternProperties`, `propertyNames.pattern`): a model controls the strings they are matched
 * against, and a backtracking engine takes exponential time on patterns such as `^(a+)+$`.
 *
 * A pattern is written in ECMA-262 syntax (what JSON Schema specifies) and run by one of two engines:
 * - the platform's `RegExp` when the pattern is provably cheap for a backtracking engine: no
 *   unbounded quantifier (`*`, `+`, `{n,}`), no quantified group, and at most
 *   {@link MAX_NATIVE_PATHS} ways through the pattern from one start position (the product of the
 *   ranges of its bounded quantifiers and of its alternatives): `^[A-Z]{3}$`, `^\d{4}-\d{2}-\d{2}$`.
 *   Its work is then at most a constant per position of the input (linear), and it costs what a
 *   native `RegExp` costs;
 * - otherwise RE2 semantics (the `re2js` engine, pure JavaScript, no native module): time linear in
 *   the input, whatever the pattern.
 *
 * Differences from ECMA-262 with the RE2 engine, all on the safe side or documented:
 * - lookahead, lookbehind and backreferences (`(?=`, `(?!`, `(?<=`, `(?<!`, `\1`, `\k<name>`) have no
 *   linear-time evaluation: such a pattern is refused when the schema is compiled
 *   (`ToolrunError` `INVALID_SCHEMA`, naming the pattern and the construct);
 * - `\s`, `\S` (outside brackets) and `.` keep their ECMA-262 meaning (Unicode white space; any
 *   character but line terminators); inside brackets `\S` is RE2's ASCII one;
 * - Unicode property escapes: general categories (`\p{L}`, `\p{Letter}`, `\p{gc=Lu}`) and scripts
 *   (`\p{Greek}`, `\p{Script=Greek}`) are translated to RE2's names; a property RE2 does not know is
 *   refused at compile time.
 *
 * Every pattern is compiled by both engines at schema compile time, so what is accepted does not
 * depend on the engine chosen.
 */

/** The most ways through a pattern from one start position that still runs on the native engine. */
export const MAX_NATIVE_PATHS = 256;

/** A compiled pattern: what Ajv needs (`test`), plus its source for messages and cache keys. */
export interface LinearRegExp {
  /** Whether the pattern matches anywhere in `text` (like `RegExp.prototype.test`). */
  test(text: string): boolean;
  /** `/source/flags`; unique per pattern and flags (Ajv keys its cache on it). */
  toString(): string;
  /** Which engine runs it: `native` (provably cheap) or `re2`. */
  readonly engine: 'native' | 're2';
}

/** The Unicode white space of ECMA-262 `\s`, as the body of a bracket expression. */
const JS_SPACE = '\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}';
/** What ECMA-262 `.` matches without the `s` flag: anything but a line terminator. */
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';

interface Analysis {
  /** The pattern in RE2 syntax. */
  re2: string;
  /** Whether the native engine is provably linear on it. */
  nativeIsSafe: boolean;
}

/**
 * Compiles an ECMA-262 `pattern` for linear-time matching (see the module comment for the engine
 * choice and the differences).
 *
 * @param flags - `u` (Ajv's default) or `''`; code points are matched either way.
 * @param options - `engine: 're2'` runs the pattern with RE2 semantics even when the native engine
 *   would be provably linear (for tests and comparisons). @defaultValue the engine chosen by analysis
 * @throws ToolrunError `INVALID_SCHEMA` when the pattern uses lookaround or a backreference, or does
 *   not compile.
 */
export function compileLinearRegExp(pattern: string, flags = '', options: { engine?: 're2' } = {}): LinearRegExp {
  const label = `/${pattern}/${flags}`;
  // ECMA-262 syntax is the contract: a pattern the platform refuses is refused, whichever engine runs it.
  let native: RegExp;
  try {
    native = new RegExp(pattern, flags.includes('u') ? 'u' : '');
  } catch (error) {
    throw new ToolrunError(
      'INVALID_SCHEMA',
      `the pattern ${quote(pattern)} is not a valid regular expression: ${cut(error instanceof Error ? error.message : String(error))}`,
    );
  }
  const analysis = analyse(pattern);
  // Compiled with RE2 even when the native engine runs it, so that what is accepted does not depend on the engine chosen.
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(analysis.re2));
  } catch (error) {
    throw refused(pattern, error instanceof Error ? error.message : String(error));
  }
  if (analysis.nativeIsSafe && options.engine !== 're2') return { test: (text) => native.test(text), toString: () => label, engine: 'native' };
  return { test: (text) => compiled.test(text), toString: () => label, engine: 're2' };
}

/**
 * The `code.regExp` option of Ajv: every schema pattern compiled with {@link compileLinearRegExp}.
 * (`code` names it for Ajv's standalone code generation, which toolrun does not use.)
 */
export const linearRegExpEngine: ((pattern: string, flags: string) => LinearRegExp) & { code: string } = Object.assign(
  (pattern: string, flags: string) => compileLinearRegExp(pattern, flags),
  { code: 'compileLinearRegExp' },
);

function quote(pattern: string): string {
  return JSON.stringify(pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern);
}

function cut(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function refused(pattern: string, reason: string): ToolrunError {
  return new ToolrunError(
    'INVALID_SCHEMA',
    `the pattern ${quote(pattern)} cannot be evaluated in linear time (toolrun matches model input with RE2 semantics): ${cut(reason)}`,
  );
}

function unsupported(pattern: string, construct: string): never {
  throw refused(pattern, `${construct} is not supported; rewrite the pattern without it`);
}

const QUANTIFIER_START = new Set(['*', '+', '?', '{']);

/**
 * One pass over the pattern: rejects what RE2 cannot run, rewrites what differs between ECMA-262
 * and RE2, and decides whether the native engine is provably linear on it.
 */
function analyse(pattern: string): Analysis {
  let out = '';
  let inClass = false;
  let unbounded = false;
  let quantifiedGroup = false;
  let paths = 1;
  /** Whether the last atom outside brackets was a group (for "quantified group"). */
  let lastWasGroup = false;
  /** Alternatives per open group, to multiply `paths` when the group closes. */
  const alternatives: number[] = [1];
  const length = pattern.length;
  let index = 0;
  const multiply = (factor: number) => {
    paths = Math.min(paths * Math.max(1, factor), Number.MAX_SAFE_INTEGER);
  };
  while (index < length) {
    const char = pattern[index]!;
    if (inClass) {
      if (char === '\\') {
        const next = pattern[index + 1] ?? '';
        const pair = surrogatePairEscape(pattern, index);
        if (pair !== undefined) {
          out += pair.text;
          index = pair.end;
          continue;
        }
        const property = propertyEscape(pattern, index);
        if (property !== undefined) {
          out += property.text;
          index = property.end;
          continue;
        }
        if (next === 's') out += JS_SPACE;
        else if (next === 'b') out += '\\x08';
        else if (next === 'k' || (next >= '1' && next <= '9')) unsupported(pattern, 'a backreference');
        else out += char + next;
        index += 2;
      } else if (char === ']') {
        inClass = false;
        out += char;
        index += 1;
      } else if (char === '[') {
        // literal in ECMA-262 brackets; RE2 would read `[[:alpha:]]` as a POSIX class
        out += '\\[';
        index += 1;
      } else {
        out += char;
        index += 1;
      }
      continue;
    }
    // outside brackets
    if (char === '\\') {
      const next = pattern[index + 1] ?? '';
      const pair = surrogatePairEscape(pattern, index);
      if (pair !== undefined) {
        out += pair.text;
        index = pair.end;
        lastWasGroup = false;
        continue;
      }
      if (next === 'k' || (next >= '1' && next <= '9')) unsupported(pattern, 'a backreference');
      const property = propertyEscape(pattern, index);
      if (property !== undefined) {
        out += property.text;
        index = property.end;
        lastWasGroup = false;
        continue;
      }
      if (next === 's') out += `[${JS_SPACE}]`;
      else if (next === 'S') out += `[^${JS_SPACE}]`;
      else out += char + next;
      index += 2;
      lastWasGroup = false;
      continue;
    }
    if (char === '[') {
      if (pattern.startsWith('[]', index)) {
        // ECMA-262: an empty class never matches
        out += '[^\\x{0}-\\x{10FFFF}]';
        index += 2;
      } else if (pattern.startsWith('[^]', index)) {
        // ECMA-262: any character, line terminators included
        out += '[\\x{0}-\\x{10FFFF}]';
        index += 3;
      } else {
        inClass = true;
        out += char;
        index += 1;
        if (pattern[index] === '^') {
          out += '^';
          index += 1;
        }
      }
      lastWasGroup = false;
      continue;
    }
    if (char === '(') {
      if (pattern.startsWith('(?=', index) || pattern.startsWith('(?!', index)) unsupported(pattern, 'a lookahead');
      if (pattern.startsWith('(?<=', index) || pattern.startsWith('(?<!', index)) unsupported(pattern, 'a lookbehind');
      alternatives.push(1);
      const prefix = groupPrefix(pattern, index);
      out += pattern.slice(index, index + prefix);
      index += prefix;
      lastWasGroup = false;
      continue;
    }
    if (char === ')') {
      multiply(alternatives.pop() ?? 1);
      if (alternatives.length === 0) alternatives.push(1);
      out += char;
      index += 1;
      lastWasGroup = true;
      continue;
    }
    if (char === '|') {
      alternatives[alternatives.length - 1] = (alternatives[alternatives.length - 1] ?? 1) + 1;
      out += char;
      index += 1;
      lastWasGroup = false;
      continue;
    }
    if (QUANTIFIER_START.has(char)) {
      const range = quantifierRange(pattern, index);
      if (range === undefined) {
        // a `{` that is not a quantifier: a literal
        out += char;
        index += 1;
        lastWasGroup = false;
        continue;
      }
      if (lastWasGroup) quantifiedGroup = true;
      if (range.max === undefined) unbounded = true;
      else multiply(range.max - range.min + 1);
      out += pattern.slice(index, range.end);
      index = range.end;
      // a lazy marker (`*?`) is part of the quantifier
      if (pattern[index] === '?') {
        out += '?';
        index += 1;
      }
      lastWasGroup = false;
      continue;
    }
    if (char === '.') out += JS_DOT;
    else out += char;
    index += 1;
    lastWasGroup = false;
  }
  multiply(alternatives[0] ?? 1);
  return { re2: out, nativeIsSafe: !unbounded && !quantifiedGroup && paths <= MAX_NATIVE_PATHS };
}

/** The quantifier starting at `index`: `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`; `undefined` for a literal `{`. */
function quantifierRange(pattern: string, index: number): { min: number; max: number | undefined; end: number } | undefined {
  const char = pattern[index];
  if (char === '*') return { min: 0, max: undefined, end: index + 1 };
  if (char === '+') return { min: 1, max: undefined, end: index + 1 };
  if (char === '?') return { min: 0, max: 1, end: index + 1 };
  const close = pattern.indexOf('}', index);
  if (close === -1 || close - index > 24) return undefined;
  const body = pattern.slice(index + 1, close);
  const match = /^(\d+)(,(\d*))?$/.exec(body);
  if (match === null) return undefined;
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : match[3] === '' ? undefined : Number(match[3]);
  return { min, max, end: close + 1 };
}

/** Length of a group opener: `(`, `(?:`, `(?<name>` (other `(?` forms are left to the engine). */
function groupPrefix(pattern: string, index: number): number {
  if (pattern[index + 1] !== '?') return 1;
  if (pattern[index + 2] === ':') return 3;
  if (pattern[index + 2] === '<') {
    const close = pattern.indexOf('>', index + 3);
    if (close !== -1 && /^[\p{L}\p{N}_$]+$/u.test(pattern.slice(index + 3, close))) return close - index + 1;
  }
  return 2;
}

const HEX4 = /^[0-9A-Fa-f]{4}$/;

/** `\uD83D\uDE00` (a surrogate pair written as two escapes) as one RE2 code point `\x{1F600}`. */
function surrogatePairEscape(pattern: string, index: number): { text: string; end: number } | undefined {
  if (pattern[index + 1] !== 'u' || pattern[index + 6] !== '\\' || pattern[index + 7] !== 'u') return undefined;
  const high = pattern.slice(index + 2, index + 6);
  const low = pattern.slice(index + 8, index + 12);
  if (!HEX4.test(high) || !HEX4.test(low)) return undefined;
  const highUnit = Number.parseInt(high, 16);
  const lowUnit = Number.parseInt(low, 16);
  if (highUnit < 0xd800 || highUnit > 0xdbff || lowUnit < 0xdc00 || lowUnit > 0xdfff) return undefined;
  const codePoint = (highUnit - 0xd800) * 0x400 + (lowUnit - 0xdc00) + 0x10000;
  return { text: `\\x{${codePoint.toString(16).toUpperCase()}}`, end: index + 12 };
}

/** Long General_Category names (ECMA-262 accepts them) and their short forms (what RE2 knows). */
const GENERAL_CATEGORIES: Readonly<Record<string, string>> = {
  Letter: 'L',
  Cased_Letter: 'LC',
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Mark: 'M',
  Combining_Mark: 'M',
  Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Number: 'N',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Punctuation: 'P',
  punct: 'P',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps',
  Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi',
  Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po',
  Symbol: 'S',
  Math_Symbol: 'Sm',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Other_Symbol: 'So',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Other: 'C',
  Control: 'Cc',
  cntrl: 'Cc',
  Format: 'Cf',
  Surrogate: 'Cs',
  Private_Use: 'Co',
  Unassigned: 'Cn',
};

/**
 * `\p{…}` / `\P{…}` in RE2's spelling: `General_Category=`, `gc=`, `Script=` and `sc=` prefixes
 * dropped, long category names shortened (`Letter` → `L`). Other properties pass unchanged (RE2
 * refuses those it does not know, at compile time).
 */
function propertyEscape(pattern: string, index: number): { text: string; end: number } | undefined {
  const kind = pattern[index + 1];
  if ((kind !== 'p' && kind !== 'P') || pattern[index + 2] !== '{') return undefined;
  const close = pattern.indexOf('}', index + 3);
  if (close === -1) return undefined;
  let name = pattern.slice(index + 3, close);
  const equals = name.indexOf('=');
  if (equals !== -1) {
    const key = name.slice(0, equals);
    if (key === 'General_Category' || key === 'gc' || key === 'Script' || key === 'sc') name = name.slice(equals + 1);
  }
  return { text: `\\${kind}{${GENERAL_CATEGORIES[name] ?? name}}`, end: close + 1 };
}
