import { fullFormats } from 'ajv-formats/dist/formats.js';

/**
 * The longest string checked against the `url` format, in UTF-16 code units; a longer one is not a
 * valid `url`. ajv-formats' `url` expression takes time quadratic in the length of a string such as
 * `http://a` followed by `::` repeated (about 0.1 s for 10,000 characters); 2,083 characters (the
 * longest URL common browsers accept) keep it under a few milliseconds. Every other format of
 * ajv-formats was measured linear on adversarial strings of 100,000 characters.
 */
export const MAX_URL_FORMAT_LENGTH = 2083;

const urlExpression = fullFormats.url as RegExp;

/** The `url` format: ajv-formats' expression on at most {@link MAX_URL_FORMAT_LENGTH} characters. */
export function isBoundedUrl(text: string): boolean {
  return text.length <= MAX_URL_FORMAT_LENGTH && urlExpression.test(text);
}

/**
 * ajv-formats' check of a string format by name (`date`, `date-time`, `email`, `uri`, `uuid`, ...;
 * `url` bounded as {@link isBoundedUrl}), or `undefined` when the format accepts every string: an
 * unknown name, a numeric format (`int32`, `int64`, `float`, `double`) or one that checks nothing
 * (`password`, `binary`).
 */
export function stringFormatCheck(name: string): ((text: string) => boolean) | undefined {
  if (name === 'url') return isBoundedUrl;
  if (!Object.hasOwn(fullFormats, name)) return undefined;
  const definition = (fullFormats as Record<string, unknown>)[name];
  const asCheck = (candidate: unknown): ((text: string) => boolean) | undefined => {
    if (candidate instanceof RegExp) return (text) => candidate.test(text);
    if (typeof candidate === 'function') return (text) => Boolean((candidate as (text: string) => unknown)(text));
    return undefined;
  };
  if (typeof definition === 'object' && definition !== null && !(definition instanceof RegExp)) {
    const { type, validate } = definition as { type?: unknown; validate?: unknown };
    return type === 'number' ? undefined : asCheck(validate);
  }
  return asCheck(definition);
}
