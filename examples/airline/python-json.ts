/**
 * Serialises values exactly as Python's `json.dumps(value)` does with its default options, so the
 * TypeScript airline tools can reproduce the τ-bench recorded tool replies byte for byte.
 *
 * Defaults reproduced: separators `", "` and `": "`, `ensure_ascii=True` (every non-ASCII UTF-16
 * code unit written as a lowercase `\uXXXX` escape), keys in insertion order, and Python's `repr`
 * of floats for non-integer numbers.
 *
 * @see https://docs.python.org/3/library/json.html#json.dumps
 */

const SIMPLE_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

function encodePythonString(text: string): string {
  let encoded = '"';
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index] as string;
    const code = text.charCodeAt(index);
    const simple = SIMPLE_ESCAPES[character];
    if (simple !== undefined) encoded += simple;
    else if (code < 0x20 || code > 0x7e) encoded += `\\u${code.toString(16).padStart(4, '0')}`;
    else encoded += character;
  }
  return `${encoded}"`;
}

/**
 * Python's `repr(float)` of a finite number: the shortest round-tripping digits (as JavaScript
 * also picks), always with a `.0` for integral values, scientific notation with a signed two-digit
 * exponent at or above 1e16 and below 1e-4 (`1e+16`, `1e-05`).
 *
 * @example formatPythonFloat(255) === '255.0'; formatPythonFloat(0.00001) === '1e-05'
 */
export function formatPythonFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e16 || magnitude < 1e-4) {
    const [mantissa = '', exponent = '0'] = value.toExponential().split('e');
    const exponentNumber = Number(exponent);
    const exponentText = `${exponentNumber < 0 ? '-' : '+'}${String(Math.abs(exponentNumber)).padStart(2, '0')}`;
    return `${mantissa}e${exponentText}`;
  }
  const text = String(value);
  return text.includes('.') ? text : `${text}.0`;
}

function encodePythonNumber(value: number): string {
  // JSON input loses Python's int/float distinction; the airline data holds only integers, so an
  // integral number is written as a Python int and anything else as a Python float.
  return Number.isInteger(value) && Math.abs(value) < 2 ** 53 ? String(value) : formatPythonFloat(value);
}

/**
 * `json.dumps(value)` with Python's default options.
 *
 * Shapes: `null`/`undefined` → `null`, booleans → `true`/`false`, numbers as above, strings
 * escaped as above, arrays and plain objects recursively (object keys in insertion order; a key
 * whose value is `undefined` is skipped).
 *
 * @throws TypeError for a function, symbol or bigint (not JSON-serialisable in Python either).
 */
export function toPythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return encodePythonNumber(value);
    case 'string':
      return encodePythonString(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((item) => toPythonJson(item)).join(', ')}]`;
      const parts: string[] = [];
      for (const [key, item] of Object.entries(value)) {
        if (item === undefined) continue;
        parts.push(`${encodePythonString(key)}: ${toPythonJson(item)}`);
      }
      return `{${parts.join(', ')}}`;
    }
    default:
      throw new TypeError(`Object of type ${typeof value} is not JSON serializable`);
  }
}
