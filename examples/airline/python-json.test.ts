import { describe, expect, it } from 'vitest';
import { formatPythonFloat, toPythonJson } from './python-json.ts';

describe('toPythonJson (Python json.dumps defaults)', () => {
  it('uses ", " and ": " separators and keeps key order', () => {
    expect(toPythonJson({ b: 1, a: [1, 'x', null, true] })).toBe('{"b": 1, "a": [1, "x", null, true]}');
    expect(toPythonJson([])).toBe('[]');
    expect(toPythonJson({})).toBe('{}');
  });

  it('escapes like ensure_ascii=True, with lowercase hex', () => {
    expect(toPythonJson('café "q" \\ \n\t\u0001\u007f😀')).toBe('"caf\\u00e9 \\"q\\" \\\\ \\n\\t\\u0001\\u007f\\ud83d\\ude00"');
  });

  it('writes floats as Python repr', () => {
    expect(formatPythonFloat(255)).toBe('255.0');
    expect(formatPythonFloat(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(formatPythonFloat(1e16)).toBe('1e+16');
    expect(formatPythonFloat(0.00001)).toBe('1e-05');
    expect(formatPythonFloat(0.0001)).toBe('0.0001');
    expect(formatPythonFloat(-2.5)).toBe('-2.5');
    expect(toPythonJson({ amount: 12.5, count: 3 })).toBe('{"amount": 12.5, "count": 3}');
  });
});
