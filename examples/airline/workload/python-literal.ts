/**
 * Reads Python literals (`ast.literal_eval`'s language, nothing executed) out of Python source text.
 * Used to derive `tools.airline.json` from τ-bench's tool files when the data has to be downloaded:
 * each tool's `get_info()` returns a dict literal, which is the OpenAI function schema of the tool.
 */

/** A Python literal as JSON: dict → object, list and tuple → array, `None` → null. */
export type PythonLiteral = null | boolean | number | string | PythonLiteral[] | { [key: string]: PythonLiteral };

/** Why a text could not be read as a Python literal, with the character offset of the problem. */
export class PythonLiteralError extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(`${message} at offset ${offset}`);
    this.name = 'PythonLiteralError';
    this.offset = offset;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', '0': '\0' };

class LiteralReader {
  private offset: number;
  constructor(
    private readonly text: string,
    start: number,
  ) {
    this.offset = start;
  }

  get position(): number {
    return this.offset;
  }

  /** Skips whitespace, line continuations and `#` comments. */
  private skipBlank(): void {
    while (this.offset < this.text.length) {
      const character = this.text[this.offset] as string;
      if (character === '#') {
        while (this.offset < this.text.length && this.text[this.offset] !== '\n') this.offset += 1;
      } else if (character === '\\' && this.text[this.offset + 1] === '\n') {
        this.offset += 2;
      } else if (/\s/.test(character)) {
        this.offset += 1;
      } else {
        return;
      }
    }
  }

  private peek(): string {
    this.skipBlank();
    return this.text[this.offset] ?? '';
  }

  private expect(character: string): void {
    if (this.peek() !== character) throw new PythonLiteralError(`expected "${character}", found "${this.text[this.offset] ?? 'end of text'}"`, this.offset);
    this.offset += 1;
  }

  /** One literal expression, e.g. `{"a": [1, 2.5, None], "b": ("x" 'y')}`. */
  readValue(): PythonLiteral {
    const character = this.peek();
    if (character === '{') return this.readDict();
    if (character === '[') return this.readSequence('[', ']');
    if (character === '(') return this.readParenthesised();
    if (/[-+\d.]/.test(character)) return this.readNumber();
    if (this.startsString()) return this.readStrings();
    const word = /^[A-Za-z_]\w*/.exec(this.text.slice(this.offset, this.offset + 64))?.[0];
    if (word === 'True' || word === 'False' || word === 'None') {
      this.offset += word.length;
      return word === 'True' ? true : word === 'False' ? false : null;
    }
    throw new PythonLiteralError(`not a literal: "${this.text.slice(this.offset, this.offset + 20)}"`, this.offset);
  }

  private readDict(): { [key: string]: PythonLiteral } {
    this.expect('{');
    const result: { [key: string]: PythonLiteral } = {};
    while (this.peek() !== '}') {
      const keyOffset = this.offset;
      const key = this.readValue();
      if (typeof key !== 'string') throw new PythonLiteralError('only string dict keys can be written as JSON', keyOffset);
      this.expect(':');
      result[key] = this.readValue();
      if (this.peek() === ',') this.offset += 1;
      else if (this.peek() !== '}') throw new PythonLiteralError('expected "," or "}"', this.offset);
    }
    this.offset += 1;
    return result;
  }

  private readSequence(open: string, close: string): PythonLiteral[] {
    this.expect(open);
    const items: PythonLiteral[] = [];
    while (this.peek() !== close) {
      items.push(this.readValue());
      if (this.peek() === ',') this.offset += 1;
      else if (this.peek() !== close) throw new PythonLiteralError(`expected "," or "${close}"`, this.offset);
    }
    this.offset += 1;
    return items;
  }

  /** `(x)` is `x`; `()`, `(x,)` and `(x, y)` are tuples. */
  private readParenthesised(): PythonLiteral {
    this.expect('(');
    if (this.peek() === ')') {
      this.offset += 1;
      return [];
    }
    const first = this.readValue();
    if (this.peek() === ')') {
      this.offset += 1;
      return first;
    }
    const items = [first];
    while (this.peek() === ',') {
      this.offset += 1;
      if (this.peek() === ')') break;
      items.push(this.readValue());
    }
    this.expect(')');
    return items;
  }

  private readNumber(): number {
    const match = /^[-+]?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?/.exec(this.text.slice(this.offset, this.offset + 64));
    if (match === null) throw new PythonLiteralError('not a number', this.offset);
    this.offset += match[0].length;
    return Number(match[0].replaceAll('_', ''));
  }

  private startsString(): boolean {
    return /^(?:[rRuU]|[bB][rR]?|[rR][bB])?['"]/.test(this.text.slice(this.offset, this.offset + 3));
  }

  /** One string, or several adjacent ones (Python concatenates them). */
  private readStrings(): string {
    let result = '';
    do result += this.readString();
    while (this.startsStringAfterBlank());
    return result;
  }

  private startsStringAfterBlank(): boolean {
    this.peek();
    return this.startsString();
  }

  private readString(): string {
    const prefix = /^[A-Za-z]*/.exec(this.text.slice(this.offset, this.offset + 2))?.[0] ?? '';
    const raw = /r/i.test(prefix);
    if (/[bB]/.test(prefix)) throw new PythonLiteralError('bytes literals cannot be written as JSON', this.offset);
    this.offset += prefix.length;
    const quote = this.text.startsWith(this.text[this.offset]!.repeat(3), this.offset) ? this.text[this.offset]!.repeat(3) : (this.text[this.offset] as string);
    const start = this.offset;
    this.offset += quote.length;
    let result = '';
    while (true) {
      if (this.offset >= this.text.length) throw new PythonLiteralError('unterminated string', start);
      if (this.text.startsWith(quote, this.offset)) {
        this.offset += quote.length;
        return result;
      }
      const character = this.text[this.offset] as string;
      if (character === '\n' && quote.length === 1) throw new PythonLiteralError('line break in a single-quoted string', this.offset);
      if (character !== '\\') {
        result += character;
        this.offset += 1;
        continue;
      }
      const next = this.text[this.offset + 1] ?? '';
      if (raw) {
        result += character + next;
        this.offset += 2;
      } else if (next === '\n') {
        this.offset += 2;
      } else if (next === 'x' || next === 'u' || next === 'U') {
        const length = next === 'x' ? 2 : next === 'u' ? 4 : 8;
        const hex = this.text.slice(this.offset + 2, this.offset + 2 + length);
        if (!new RegExp(`^[0-9a-fA-F]{${length}}$`).test(hex)) throw new PythonLiteralError(`bad \\${next} escape`, this.offset);
        result += String.fromCodePoint(Number.parseInt(hex, 16));
        this.offset += 2 + length;
      } else if (next in SIMPLE_ESCAPES) {
        result += SIMPLE_ESCAPES[next];
        this.offset += 2;
      } else {
        // Python keeps an unknown escape as written.
        result += character + next;
        this.offset += 2;
      }
    }
  }
}

/**
 * Reads the one Python literal that starts at `start` (leading blanks and comments skipped).
 *
 * Understood: dicts with string keys, lists, tuples (as arrays), parenthesised expressions, strings
 * in every quote style with their escapes (raw strings too), adjacent strings concatenated, ints and
 * floats, `True`, `False`, `None`, trailing commas, comments.
 *
 * @returns the value as JSON and the offset just after it.
 * @throws PythonLiteralError when the text there is not such a literal (bytes literals, sets and
 *   non-string dict keys included, as JSON cannot hold them).
 */
export function readPythonLiteral(text: string, start = 0): { value: PythonLiteral; end: number } {
  const reader = new LiteralReader(text, start);
  const value = reader.readValue();
  return { value, end: reader.position };
}

/**
 * The literal returned by the function `functionName` of a Python source file: the expression after
 * the first `return` that follows `def <functionName>(`. τ-bench's tool files return their schema
 * this way from `get_info()`.
 *
 * @throws PythonLiteralError when there is no such function or its return value is not a literal.
 */
export function readReturnedLiteral(source: string, functionName: string): PythonLiteral {
  const definition = new RegExp(`\\bdef\\s+${functionName}\\s*\\(`).exec(source);
  if (definition === null) throw new PythonLiteralError(`no function ${functionName}`, 0);
  const returnStatement = /\breturn\b/g;
  returnStatement.lastIndex = definition.index;
  const found = returnStatement.exec(source);
  if (found === null) throw new PythonLiteralError(`no return in ${functionName}`, definition.index);
  return readPythonLiteral(source, found.index + found[0].length).value;
}
