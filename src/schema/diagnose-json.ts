import { evaluateExpression, expressionAt } from './json-expression.ts';
import { truncateText } from './preview.ts';

/** The longest argument text that is diagnosed (and repaired for the suggestion). */
const MAX_DIAGNOSED_CHARS = 65_536;

/** One way a text breaks JSON, in words for the model. */
export interface JsonProblem {
  kind: 'comment' | 'single-quotes' | 'python-literal' | 'arithmetic' | 'trailing-comma' | 'unquoted-name' | 'unquoted-value' | 'stray-quote' | 'missing-comma';
  headline: string;
  what: string;
  advice: string;
}

/** A date or a time written without quotes (`2024-01-15`, `10:30`). */
const DATE_OR_TIME_TEXT = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?(?=\s*[,}\]\n]|\s*$)|^\d{1,2}:\d{2}(?::\d{2})?(?=\s*[,}\]\n]|\s*$)/;

/** Whether a double-quoted property name starts at `index` (`"b": …`). */
function quotedNameAt(text: string, index: number): boolean {
  return /^"(?:[^"\\\n]|\\.){0,256}"\s*:/.test(text.slice(index, index + 300));
}

/**
 * What makes `text` invalid JSON, in the ways models really break it: comments, single quotes,
 * Python's `True`/`False`/`None`, arithmetic as a value (`3*4`), a trailing comma, an unquoted
 * property name, an unescaped `"` inside a string, a missing comma. `repaired` is the text with
 * those fixed, when it then parses as one object: shown to the model as the call to send (never
 * run). A text over 65,536 characters is not diagnosed.
 */
export function diagnoseJson(text: string): { problems: JsonProblem[]; repaired?: string } {
  if (text.length > MAX_DIAGNOSED_CHARS) return { problems: [] };
  const repair = new JsonRepair(text);
  repair.run();
  const problems = [...repair.found.values()];
  if (problems.length === 0 || repair.failed) return { problems };
  try {
    const value = JSON.parse(repair.out) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { problems, repaired: JSON.stringify(value) };
  } catch {
    // the problems found are real, but not the only ones
  }
  return { problems };
}

/**
 * One pass over a text that is not JSON: each piece is read by the method of its kind (a value
 * after a value, a string, a comment, a word, a number or an expression, a comma), which notes what
 * is wrong and writes the piece as JSON to `out`; `failed` when a piece cannot be repaired.
 */
class JsonRepair {
  readonly found = new Map<JsonProblem['kind'], JsonProblem>();
  out = '';
  index = 0;
  failed = false;

  constructor(readonly text: string) {}

  run(): void {
    const { text } = this;
    while (this.index < text.length && !this.failed) {
      const char = text[this.index]!;
      if ((char === '"' || char === "'" || char === '{' || char === '[') && this.afterValue(char)) continue;
      if (char === '"' || char === "'") this.quoted(char);
      else if (char === '/' && (text[this.index + 1] === '/' || text[this.index + 1] === '*')) this.comment();
      else if (/[A-Za-z_$]/.test(char)) this.word();
      else if (!((/[-+\d(.]/.test(char) && this.numberOrExpression()) || (char === ',' && this.trailingComma()))) {
        this.out += char;
        this.index += 1;
      }
    }
  }

  note(problem: JsonProblem): void {
    if (!this.found.has(problem.kind)) this.found.set(problem.kind, problem);
  }

  /** Whether the next non-space character after `from` ends a value (`,` `:` `}` `]` or the end). */
  closesValue(from: number): boolean {
    const { text } = this;
    let cursor = from;
    while (cursor < text.length && /\s/.test(text[cursor]!)) cursor += 1;
    return cursor >= text.length || ',:}]'.includes(text[cursor]!);
  }

  /** Whether a value may start here: at the start, or after `:` `,` `[`. */
  atValueStart(): boolean {
    return /(?:^|[:,[])\s*$/.test(this.out.slice(-64));
  }

  /**
   * A value (or a name) right after a value, with nothing between them (`{"a": 1 "b": 2}`): a
   * stray quote is noted and skipped (true: read), a missing comma noted and written (false: the
   * value is read next).
   */
  afterValue(char: string): boolean {
    const { text, index } = this;
    const previous = /\S(?=\s*$)/.exec(this.out.slice(-64))?.[0];
    // a quote right after a number, true/false/null, `]` or `}`: stray, unless a quoted name follows (`5 "b": 1`)
    if (char === '"' && previous !== undefined && /[\d}\]el]/.test(previous) && !quotedNameAt(text, index)) {
      const valueText = /([^\s,:[{]+)\s*$/.exec(this.out.slice(-64))?.[1] ?? previous;
      this.note({
        kind: 'stray-quote',
        headline: 'a double quote is out of place',
        what: `a stray " follows ${truncateText(valueText, 30)}`,
        advice: 'remove the " that follows a number, true, false, null or a closing bracket (or quote the whole value as one string)',
      });
      if (!this.closesValue(index + 1)) this.failed = true;
      else this.index += 1;
      return true;
    }
    if (previous !== undefined && /["\d}\]el]/.test(previous)) {
      this.note({
        kind: 'missing-comma',
        headline: 'a comma is missing',
        what: 'two values follow each other without a comma',
        advice: 'put a comma between the members of an object or array',
      });
      this.out += ',';
    }
    return false;
  }

  /** A string in double or single (`quote`) quotes, written double-quoted; unescaped quotes and strings joined with `+` noted. */
  quoted(quote: string): void {
    const { text, index } = this;
    const length = text.length;
    let end = index + 1;
    let value = '';
    for (; end < length; end += 1) {
      const inner = text[end]!;
      if (inner === '\\' && end + 1 < length) {
        const next = text[end + 1]!;
        value +=
          next === 'n'
            ? '\n'
            : next === 't'
              ? '\t'
              : next === 'r'
                ? '\r'
                : next === 'u'
                  ? String.fromCharCode(Number.parseInt(text.slice(end + 2, end + 6), 16) || 0)
                  : next;
        end += next === 'u' ? 5 : 1;
        continue;
      }
      if (inner === quote) {
        if (this.closesValue(end + 1)) break;
        // `"a" + "b"`: strings joined with +, an expression
        const joined = /^\s*\+\s*(["'])/.exec(text.slice(end + 1, end + 65));
        if (joined !== null) {
          this.note({
            kind: 'arithmetic',
            headline: 'a value is an expression',
            what: 'strings joined with + is an expression; JSON takes only its result',
            advice: 'send the joined text as one string',
          });
          end += joined[0].length;
          continue;
        }
        if (quote === '"') {
          this.note({
            kind: 'stray-quote',
            headline: 'a double quote inside a string is not escaped',
            what: `a " inside the string ${JSON.stringify(truncateText(value, 30))} ends it early`,
            advice: 'escape a double quote inside a string as \\"',
          });
        }
      }
      value += inner;
    }
    if (end >= length) {
      this.failed = true;
      return;
    }
    if (quote === "'") {
      this.note({
        kind: 'single-quotes',
        headline: 'names or strings are in single quotes',
        what: `${truncateText(text.slice(index, end + 1), 30)} is in single quotes`,
        advice: 'write every property name and string in double quotes',
      });
    }
    this.out += JSON.stringify(value);
    this.index = end + 1;
  }

  /** A `//` or `/* … *\/` comment: noted and left out. */
  comment(): void {
    const { text, index } = this;
    const block = text[index + 1] === '*';
    const end = block ? text.indexOf('*/', index + 2) : text.indexOf('\n', index + 2);
    this.note({
      kind: 'comment',
      headline: 'they hold a comment',
      what: `a comment (${block ? '/* … */' : '// …'}) is not JSON`,
      advice: 'remove the comments',
    });
    this.index = end === -1 ? text.length : end + (block ? 2 : 1);
  }

  /** A word: an unquoted name, a Python literal, a JSON literal, an expression, or unquoted text. */
  word(): void {
    const { text, index } = this;
    const length = text.length;
    let end = index + 1;
    while (end < length && /[\w$]/.test(text[end]!)) end += 1;
    const word = text.slice(index, end);
    const python = word === 'True' ? 'true' : word === 'False' ? 'false' : word === 'None' ? 'null' : undefined;
    let after = end;
    while (after < length && /\s/.test(text[after]!)) after += 1;
    if (text[after] === ':') {
      this.note({
        kind: 'unquoted-name',
        headline: 'a property name is not quoted',
        what: `the property name ${truncateText(word, 40)} has no double quotes`,
        advice: `write property names in double quotes ("${truncateText(word, 40)}":)`,
      });
      this.out += JSON.stringify(word);
    } else if (python !== undefined) {
      this.note({
        kind: 'python-literal',
        headline: `${word} is Python, not JSON`,
        what: `${word} is Python; JSON writes ${python}`,
        advice: `write ${python} instead of ${word}`,
      });
      this.out += python;
    } else if (word === 'true' || word === 'false' || word === 'null') this.out += word;
    else {
      const expression = this.atValueStart() ? expressionAt(text, index) : undefined;
      if (expression === undefined) {
        if (!this.atValueStart() || !this.unquotedText()) this.failed = true;
        return;
      }
      if (this.expression(expression)) this.index += expression.length;
      return;
    }
    this.index = end;
  }

  /** A number, an expression written as a value, or an unquoted date or time; false when none starts here. */
  numberOrExpression(): boolean {
    const { text, index } = this;
    const expression = this.atValueStart() ? expressionAt(text, index) : undefined;
    if (expression !== undefined) {
      if (this.expression(expression)) this.index += expression.length;
      return true;
    }
    if (this.atValueStart() && DATE_OR_TIME_TEXT.test(text.slice(index, index + 20)) && this.unquotedText()) return true;
    // a number as a whole (its exponent is not a name)
    const number = /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/.exec(text.slice(index, index + 400))?.[0];
    if (number === undefined) return false;
    this.out += number;
    this.index += number.length;
    return true;
  }

  /** A comma before `}` or `]`: noted and left out (true); false for any other comma. */
  trailingComma(): boolean {
    const { text } = this;
    let after = this.index + 1;
    while (after < text.length && /\s/.test(text[after]!)) after += 1;
    if (text[after] !== '}' && text[after] !== ']') return false;
    this.note({
      kind: 'trailing-comma',
      headline: 'a comma ends a list',
      what: `a comma before ${text[after]}`,
      advice: `remove the comma before ${text[after]}`,
    });
    this.index += 1;
    return true;
  }

  /**
   * Text written as a value without quotes (`Paris`, `New York`, `2024-01-15`), up to the next
   * `,` `}` `]` or line end: noted and written quoted; `false` when it holds characters that make it
   * something else (quotes, brackets).
   */
  unquotedText(): boolean {
    const raw = /^[^,}\]\n]*/.exec(this.text.slice(this.index, this.index + 200))?.[0] ?? '';
    const value = raw.trimEnd();
    if (value === '' || /["'{}[\]:]/.test(value) || /^(?:undefined|NaN|-?Infinity)$/.test(value)) return false;
    this.note({
      kind: 'unquoted-value',
      headline: 'a text value is not quoted',
      what: `the value ${truncateText(value, 40)} has no double quotes`,
      advice: `write text values in double quotes (${JSON.stringify(truncateText(value, 40))})`,
    });
    this.out += JSON.stringify(value);
    this.index += value.length;
    return true;
  }

  /** Notes an expression written as a value and writes its result; `false` (and `failed`) when it cannot be computed. */
  expression(expression: string): boolean {
    const value = evaluateExpression(expression);
    const shown = truncateText(expression, 40);
    this.note({
      kind: 'arithmetic',
      headline: /^[-+\d.(\s*/%]+$/.test(expression) ? 'a value is arithmetic' : 'a value is an expression',
      what: `${shown} is an expression; JSON takes only its result`,
      advice: value === undefined ? `compute ${shown} and send the resulting number` : `compute values before sending them (${shown} is ${String(value)})`,
    });
    if (value === undefined) {
      this.failed = true;
      return false;
    }
    this.out += String(value);
    return true;
  }
}
