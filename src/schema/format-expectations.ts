/** What a format asks for, in words a model can act on, with an example value. */
export interface FormatExpectation {
  /** `YYYY-MM-DD`, `an e-mail address`, ... */
  expected: string;
  /** A correct value, e.g. `2024-01-15`. */
  example: string;
  /** True for dates, times and date-times: reported as `DATE_FORMAT_ERROR`. */
  isDate: boolean;
}

/**
 * The e-mail address toolrun gives as an example of the `email` format. The redactor leaves this
 * exact address alone (it is toolrun's text, not anyone's data), so the example reaches the model.
 */
export const EXAMPLE_EMAIL_ADDRESS = 'name@example.com';

const FORMATS: Record<string, FormatExpectation> = {
  date: { expected: 'YYYY-MM-DD', example: '2024-01-15', isDate: true },
  'date-time': { expected: 'an RFC 3339 date-time YYYY-MM-DDTHH:MM:SSZ', example: '2024-01-15T09:30:00Z', isDate: true },
  time: { expected: 'HH:MM:SS with a time zone', example: '09:30:00Z', isDate: true },
  duration: { expected: 'an ISO 8601 duration', example: 'P3DT4H', isDate: false },
  email: { expected: 'an e-mail address', example: EXAMPLE_EMAIL_ADDRESS, isDate: false },
  'idn-email': { expected: 'an e-mail address', example: EXAMPLE_EMAIL_ADDRESS, isDate: false },
  hostname: { expected: 'a host name', example: 'example.com', isDate: false },
  'idn-hostname': { expected: 'a host name', example: 'example.com', isDate: false },
  ipv4: { expected: 'an IPv4 address', example: '192.168.0.1', isDate: false },
  ipv6: { expected: 'an IPv6 address', example: '2001:db8::1', isDate: false },
  uri: { expected: 'an absolute URI', example: 'https://example.com/page', isDate: false },
  'uri-reference': { expected: 'a URI reference', example: 'https://example.com/page', isDate: false },
  iri: { expected: 'an absolute IRI', example: 'https://example.com/page', isDate: false },
  'iri-reference': { expected: 'an IRI reference', example: 'https://example.com/page', isDate: false },
  'uri-template': { expected: 'a URI template', example: 'https://example.com/{id}', isDate: false },
  url: { expected: 'a URL', example: 'https://example.com/page', isDate: false },
  uuid: { expected: 'a UUID', example: '123e4567-e89b-12d3-a456-426614174000', isDate: false },
  'json-pointer': { expected: 'a JSON Pointer', example: '/items/0/name', isDate: false },
  'relative-json-pointer': { expected: 'a relative JSON Pointer', example: '1/name', isDate: false },
  regex: { expected: 'a regular expression', example: '^[a-z]+$', isDate: false },
  byte: { expected: 'base64 text', example: 'aGVsbG8=', isDate: false },
};

/**
 * The expectation for a JSON Schema `format` name, or a generic one (`a <format> value`) for a
 * format not in the table.
 *
 * @see JSON Schema 2020-12 Validation §7.3 (defined formats), RFC 3339
 */
export function describeFormat(format: string): FormatExpectation {
  return FORMATS[format] ?? { expected: `a ${format} value`, example: '', isDate: false };
}

/**
 * Reads a `pattern` that clearly describes a date or a time (`^\d{4}-\d{2}-\d{2}$`,
 * `^[0-9]{2}/[0-9]{2}/[0-9]{4}$`, `^\d{2}:\d{2}$`...) and returns the layout it asks for, e.g.
 * `YYYY-MM-DD` with an example; `undefined` for any other pattern.
 */
export function describeDatePattern(pattern: string): FormatExpectation | undefined {
  // Reduce the pattern to a layout: each run of digit classes becomes N×'#'.
  let layout = pattern.replace(/^\^/, '').replace(/\$$/, '');
  layout = layout.replace(/(?:\\d|\[0-9\])(?:\{(\d)(?:,(\d))?\})?/g, (_match, count?: string, upper?: string) => '#'.repeat(Number(upper ?? count ?? 1)));
  layout = layout.replace(/\\([-/.:T ])/g, '$1');
  const templates: Array<[RegExp, string, string]> = [
    [/^####-##-##$/, 'YYYY-MM-DD', '2024-01-15'],
    [/^####\/##\/##$/, 'YYYY/MM/DD', '2024/01/15'],
    [/^##\/##\/####$/, 'MM/DD/YYYY', '01/15/2024'],
    [/^##-##-####$/, 'DD-MM-YYYY', '15-01-2024'],
    [/^##\.##\.####$/, 'DD.MM.YYYY', '15.01.2024'],
    [/^####-##-##T##:##(?::##)?/, 'YYYY-MM-DDTHH:MM:SS', '2024-01-15T09:30:00'],
    [/^####-##-## ##:##(?::##)?$/, 'YYYY-MM-DD HH:MM:SS', '2024-01-15 09:30:00'],
    [/^##:##:##$/, 'HH:MM:SS', '09:30:00'],
    [/^##:##$/, 'HH:MM', '09:30'],
    [/^####-##$/, 'YYYY-MM', '2024-01'],
  ];
  for (const [template, expected, example] of templates) {
    if (template.test(layout)) {
      const withSeconds = expected === 'YYYY-MM-DDTHH:MM:SS' && !/T##:##:##/.test(layout) ? 'YYYY-MM-DDTHH:MM' : expected;
      return { expected: withSeconds, example: withSeconds === expected ? example : example.slice(0, 16), isDate: true };
    }
  }
  return undefined;
}

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * Why a value written in the layout of a `date` or `date-time` format is still not one: a day or
 * month that does not exist (`2025-02-30`: "February 2025 has 28 days"), an hour, minute or second
 * out of range, or a date-time without a time zone. `undefined` when the value is not in the
 * format's layout (then the layout itself is what is wrong) or nothing is found.
 *
 * @see RFC 3339 §5.6 (full-date, full-time), §5.7 (day and leap-year limits)
 */
export function describeImpossibleDate(format: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || (format !== 'date' && format !== 'date-time')) return undefined;
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?$/.exec(value);
  if (match === null) return undefined;
  const [, yearText, monthText, dayText, hourText, minuteText, secondText, zone] = match;
  if (format === 'date' && hourText !== undefined) return undefined;
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  if (month < 1 || month > 12) return `there is no month ${monthText} (months are 01 to 12)`;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return `${MONTH_NAMES[month - 1]} ${yearText} has ${days} days, so ${value.slice(0, 10)} does not exist`;
  if (format === 'date-time') {
    if (hourText === undefined) return 'a date-time needs a time after the date, e.g. 2024-01-15T09:30:00Z';
    if (Number(hourText) > 23) return `there is no hour ${hourText} (hours are 00 to 23)`;
    if (Number(minuteText) > 59) return `there is no minute ${minuteText} (minutes are 00 to 59)`;
    if (secondText !== undefined && Number(secondText) > 60) return `there is no second ${secondText} (seconds are 00 to 59)`;
    if (secondText === undefined) return 'a date-time needs seconds, e.g. 09:30:00';
    if (zone === undefined) return `a date-time needs a time zone: add Z for UTC (${value}Z) or an offset such as +02:00`;
  }
  return undefined;
}
