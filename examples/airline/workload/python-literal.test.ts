import { describe, expect, it } from 'vitest';
import { PythonLiteralError, readPythonLiteral, readReturnedLiteral } from './python-literal.ts';

describe('readPythonLiteral', () => {
  it('reads dicts, lists, tuples, numbers, booleans and None, with trailing commas and comments', () => {
    const source = `{
      "type": "object",  # a comment
      'count': -12,
      "ratio": 2.5e1,
      "big": 1_000,
      "flags": [True, False, None,],
      "pair": (1, "two"),
      "single": ("only"),
      "empty": (),
      "nested": {"a": []},
    }`;
    expect(readPythonLiteral(source).value).toEqual({
      type: 'object',
      count: -12,
      ratio: 25,
      big: 1000,
      flags: [true, false, null],
      pair: [1, 'two'],
      single: 'only',
      empty: [],
      nested: { a: [] },
    });
  });

  it('reads every quote style, escapes, raw strings, and concatenates adjacent strings', () => {
    expect(readPythonLiteral(`"it's" ' "quoted" '`).value).toBe(`it's "quoted" `);
    expect(readPythonLiteral(`("The date in the format 'YYYY-MM-DD', "\n  "such as '2024-05-01'.")`).value).toBe(
      "The date in the format 'YYYY-MM-DD', such as '2024-05-01'.",
    );
    expect(readPythonLiteral(String.raw`"tab\tnew\nline \\ \u00e9 \x41 \q"`).value).toBe('tab\tnew\nline \\ é A \\q');
    expect(readPythonLiteral(String.raw`r"C:\path\n"`).value).toBe(String.raw`C:\path\n`);
    expect(readPythonLiteral(`"""multi\nline "quoted" text"""`).value).toBe('multi\nline "quoted" text');
    expect(readPythonLiteral(`u'unicode'`).value).toBe('unicode');
  });

  it('returns the offset just after the literal', () => {
    const source = '  [1, 2]  # rest';
    expect(readPythonLiteral(source)).toEqual({ value: [1, 2], end: 8 });
  });

  it('rejects what JSON cannot hold or what is not a literal, with the offset', () => {
    expect(() => readPythonLiteral('{1: "a"}')).toThrow(PythonLiteralError);
    expect(() => readPythonLiteral('b"bytes"')).toThrow(/bytes literals/);
    expect(() => readPythonLiteral('call()')).toThrow(/not a literal/);
    expect(() => readPythonLiteral('"open')).toThrow(/unterminated string at offset 0/);
    expect(() => readPythonLiteral('[1 2]')).toThrow(/expected "," or "]"/);
  });
});

describe('readReturnedLiteral', () => {
  const source = `class Tool:
    @staticmethod
    def invoke(data, user_id: str) -> str:
        return "not this one"

    @staticmethod
    def get_info() -> Dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": "get_user_details", "parameters": {"required": ["user_id",],},},
        }
`;

  it('reads the literal after the first return of the named function', () => {
    expect(readReturnedLiteral(source, 'get_info')).toEqual({
      type: 'function',
      function: { name: 'get_user_details', parameters: { required: ['user_id'] } },
    });
    expect(readReturnedLiteral(source, 'invoke')).toBe('not this one');
  });

  it('fails when the function is missing', () => {
    expect(() => readReturnedLiteral(source, 'get_schema')).toThrow(/no function get_schema/);
  });
});
