/**
 * Values models write as expressions inside JSON (`2 * Math.PI`, `Math.PI / 2`, `sqrt(2)`,
 * `10 ** 6`): found in argument text and, where only numbers, the usual constants and functions are
 * involved, computed — so the diagnosis can say what to send instead.
 */

/** The longest expression read, in characters. */
const MAX_EXPRESSION_CHARS = 200;

const CONSTANTS: Readonly<Record<string, number>> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI, inf: Number.POSITIVE_INFINITY };
const FUNCTIONS: Readonly<Record<string, (...values: number[]) => number>> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  pow: Math.pow,
  exp: Math.exp,
  log: Math.log,
  log10: Math.log10,
  log2: Math.log2,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  round: Math.round,
  floor: Math.floor,
  ceil: Math.ceil,
  min: Math.min,
  max: Math.max,
};
/** Namespaces a constant or function is written under: `Math.PI`, `math.pi`, `np.pi`. */
const NAMESPACE = /^(?:Math|math|np|numpy)\./;
/** A name is a constant only namespaced, or spelled `pi`/`PI` alone (`e` alone is too common a letter). */
const BARE_CONSTANTS = new Set(['pi', 'PI']);

/** A JSON number literal, which is never an expression. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/;
/** Text that is a date or a time without quotes (`2024-01-15`, `10:30`): not arithmetic. */
const DATE_OR_TIME = /^\d{4}-\d{2}(?:-\d{2})?(?:\b|T)|^\d{1,2}:\d{2}/;

/**
 * The expression written as a value at `index` of `text` (up to a `,` `}` `]` outside parentheses,
 * a quote or a line end), or `undefined` when the text there is not one: it must consist of numbers,
 * names, operators and parentheses, and hold an operator, a call or a known constant (`Math.PI`) — a
 * lone word (`Paris`) or a JSON number is not an expression, nor is an unquoted date.
 */
export function expressionAt(text: string, index: number): string | undefined {
  let depth = 0;
  let end = index;
  for (; end < text.length && end - index < MAX_EXPRESSION_CHARS; end += 1) {
    const char = text[end]!;
    if (char === '(') depth += 1;
    else if (char === ')') {
      if (depth === 0) break;
      depth -= 1;
    } else if (char === '"' || char === "'" || char === '\n' || (depth === 0 && (char === ',' || char === '}' || char === ']'))) break;
  }
  const expression = text.slice(index, end).trimEnd();
  if (expression === '' || depth !== 0 || JSON_NUMBER.test(expression) || DATE_OR_TIME.test(expression)) return undefined;
  if (!/^[-+*/%().,\w\s$]+$/.test(expression)) return undefined;
  const operator = /[\w.)]\s*(?:\*\*|[-+*/%])\s*[-+(.\w$]/.test(expression.replace(/\d(?:\.\d+)?[eE][-+]?\d/g, '0'));
  const call = /[A-Za-z_$][\w.$]*\s*\(/.test(expression);
  const constant = /^[A-Za-z_$][\w.$]*$/.test(expression) && constantOf(expression) !== undefined;
  return operator || call || constant ? expression : undefined;
}

function constantOf(name: string): number | undefined {
  if (NAMESPACE.test(name)) return CONSTANTS[name.replace(NAMESPACE, '').toLowerCase()];
  return BARE_CONSTANTS.has(name) ? Math.PI : undefined;
}

function functionOf(name: string): ((...values: number[]) => number) | undefined {
  const bare = name.replace(NAMESPACE, '');
  return Object.hasOwn(FUNCTIONS, bare) ? FUNCTIONS[bare] : undefined;
}

/**
 * The value of an expression over decimal numbers with `+ - * / % **`, parentheses, the constants
 * `pi`, `e`, `tau` (as `Math.PI`, `math.pi`, `np.pi`; `pi` alone) and the functions `sqrt`, `abs`,
 * `pow`, `exp`, `log`, `log10`, `log2`, `sin`, `cos`, `tan`, `round`, `floor`, `ceil`, `min`, `max`
 * (bare or namespaced), rounded to 15 significant digits; `undefined` for anything else or a result
 * that is not finite. Never throws.
 */
export function evaluateExpression(expression: string): number | undefined {
  const tokens = expression.match(/\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+|[A-Za-z_$][\w.$]*|\*\*|[-+*/%(),]/g);
  if (tokens === null || tokens.join('') !== expression.replace(/\s+/g, '')) return undefined;
  let position = 0;
  const peek = () => tokens[position];
  const primary = (): number | undefined => {
    const token = tokens[position++];
    if (token === undefined) return undefined;
    if (token === '(') {
      const inner = sum();
      return tokens[position++] === ')' ? inner : undefined;
    }
    if (/^[\d.]/.test(token)) return Number(token);
    if (peek() === '(') {
      const fn = functionOf(token);
      if (fn === undefined) return undefined;
      position += 1;
      const values: number[] = [];
      if (peek() !== ')') {
        for (;;) {
          const value = sum();
          if (value === undefined) return undefined;
          values.push(value);
          if (peek() !== ',') break;
          position += 1;
        }
      }
      return tokens[position++] === ')' ? fn(...values) : undefined;
    }
    return constantOf(token);
  };
  const unary = (): number | undefined => {
    if (peek() === '-' || peek() === '+') {
      const sign = tokens[position++] === '-' ? -1 : 1;
      const inner = unary();
      return inner === undefined ? undefined : sign * inner;
    }
    const base = primary();
    if (base === undefined || peek() !== '**') return base;
    position += 1;
    const exponent = unary();
    return exponent === undefined ? undefined : base ** exponent;
  };
  const product = (): number | undefined => {
    let value = unary();
    while (value !== undefined && (peek() === '*' || peek() === '/' || peek() === '%')) {
      const operator = tokens[position++];
      const right = unary();
      value = right === undefined ? undefined : operator === '*' ? value * right : operator === '/' ? value / right : value % right;
    }
    return value;
  };
  const sum = (): number | undefined => {
    let value = product();
    while (value !== undefined && (peek() === '+' || peek() === '-')) {
      const operator = tokens[position++];
      const right = product();
      value = right === undefined ? undefined : operator === '+' ? value + right : value - right;
    }
    return value;
  };
  const result = sum();
  if (result === undefined || position !== tokens.length || !Number.isFinite(result)) return undefined;
  return Number(result.toPrecision(15));
}
