/** Default bound of a received-value preview, in characters. */
export const DEFAULT_PREVIEW_MAX_CHARS = 120;

/**
 * Cuts a string to at most `maxChars` characters, marking the cut with `…` (the marker counts).
 */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 1) return '…'.slice(0, Math.max(0, maxChars));
  return `${text.slice(0, maxChars - 1)}…`;
}

/**
 * A bounded JSON preview of any value, for `received` and `detail`: JSON text (strings quoted),
 * `undefined` for undefined, a placeholder for values JSON cannot hold (bigint as `5n`, functions,
 * symbols; a cycle as `"[Circular]"`). A cut that would split a short token drops it whole (see
 * `truncateAtToken`). Only what fits is serialised: the cost is bounded by
 * `maxChars` (plus the key list of each object it enters), not by the size of the value, so a
 * 1 MB argument previewed once per field error costs no more than a small one. Never throws.
 *
 * @param maxChars - bound on the result length, in characters. @defaultValue 120
 */
export function previewJson(value: unknown, maxChars: number = DEFAULT_PREVIEW_MAX_CHARS): string {
  return truncateAtToken(stringifyForPreview(value, Math.max(0, maxChars) + 1), maxChars);
}

/** Characters a token (an identifier, a key, a base64 or hex secret) is made of. */
const TOKEN_CHAR = /[\p{L}\p{N}_\-+/=~]/u;
/** How far back a cut looks for the start of the token it would split, in characters. */
const TOKEN_LOOKBACK = 32;

/**
 * {@link truncateText}, but a cut that would split a token shorter than 32 characters drops the
 * token whole: a preview is redacted after it is made, and the head of a split secret (`sk-proj-Q7`)
 * may no longer look like one.
 */
function truncateAtToken(text: string, maxChars: number): string {
  if (text.length <= maxChars || maxChars <= 1) return truncateText(text, maxChars);
  let cut = maxChars - 1;
  if (TOKEN_CHAR.test(text.charAt(cut - 1)) && TOKEN_CHAR.test(text.charAt(cut))) {
    for (let index = cut - 1; index > cut - TOKEN_LOOKBACK && index > 0; index--) {
      if (!TOKEN_CHAR.test(text.charAt(index - 1))) {
        cut = index;
        break;
      }
    }
  }
  return `${text.slice(0, cut)}…`;
}

function stringifyForPreview(value: unknown, budget: number): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value.toString()}n`;
  if (typeof value === 'function') return '[function]';
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const writer = new BoundedWriter(budget);
  try {
    writeJson(value, writer, [], false);
  } catch (stop) {
    // A getter or proxy trap that throws: a placeholder, as for any value JSON cannot hold.
    if (stop !== FULL) return Array.isArray(value) ? '[array]' : '[object]';
  }
  return writer.text;
}

/** Collects output until `budget` characters are written, then throws {@link FULL} to stop the walk. */
class BoundedWriter {
  text = '';
  constructor(private readonly budget: number) {}

  write(part: string): void {
    const room = this.budget - this.text.length;
    if (part.length >= room) {
      this.text += part.slice(0, room);
      throw FULL;
    }
    this.text += part;
  }

  get room(): number {
    return this.budget - this.text.length;
  }
}

const FULL = Symbol('preview full');

/** Writes `value` as JSON.stringify would (with bigint as `"5n"`); `inArray` decides how a value JSON drops is written. */
function writeJson(value: unknown, writer: BoundedWriter, ancestors: object[], inArray: boolean): boolean {
  let current = value;
  if (typeof current === 'object' && current !== null && typeof (current as { toJSON?: unknown }).toJSON === 'function') {
    current = (current as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof current) {
    case 'string':
      // Only what can be shown is quoted: a 1 MB string costs its first `room` characters.
      writer.write(JSON.stringify(current.length > writer.room ? current.slice(0, writer.room) : current));
      return true;
    case 'number':
      writer.write(Number.isFinite(current) ? String(current) : 'null');
      return true;
    case 'boolean':
      writer.write(current ? 'true' : 'false');
      return true;
    case 'bigint':
      writer.write(`"${current.toString()}n"`);
      return true;
    case 'undefined':
    case 'function':
    case 'symbol':
      if (inArray) writer.write('null');
      return inArray;
    default:
      break;
  }
  if (current === null) {
    writer.write('null');
    return true;
  }
  const container = current as object;
  if (ancestors.includes(container)) {
    writer.write('"[Circular]"');
    return true;
  }
  ancestors.push(container);
  if (Array.isArray(container)) {
    writer.write('[');
    for (let index = 0; index < container.length; index++) {
      if (index > 0) writer.write(',');
      writeJson(container[index], writer, ancestors, true);
    }
    writer.write(']');
  } else {
    writer.write('{');
    let first = true;
    const record = container as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const inner = record[key];
      if (inner === undefined || typeof inner === 'function' || typeof inner === 'symbol') continue;
      writer.write(`${first ? '' : ','}${JSON.stringify(key.length > writer.room ? key.slice(0, writer.room) : key)}:`);
      first = false;
      writeJson(inner, writer, ancestors, false);
    }
    writer.write('}');
  }
  ancestors.pop();
  return true;
}

/** A short JSON-ish type name of a value: `string`, `integer`, `number`, `boolean`, `null`, `array`, `object`, `undefined`. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
