/** What a format asks for, in words a model can act on, with an example value. */
export interface FormatExpectation {
  /** `YYYY-MM-DD`, `an e-mail address`, ... */
  expected: string;
  /** A correct value, e.g. `2024-01-15`. */
  example: string;
  /** True for dates, times and date-times: reported as `DATE_FORMAT_ERROR`. */
  isDate: boolean;
}

const FORMATS: Record<string, FormatExpectation> = {
  date: { expected: 'YYYY-MM-DD', example: '2024-01-15', isDate: true },
  'date-time': { expected: 'an RFC 3339 date-time YYYY-MM-DDTHH:MM:SSZ', example: '2024-01-15T09:30:00Z', isDate: true },
  time: { expected: 'HH:MM:SS with a time zone', example: '09:30:00Z', isDate: true },
  duration: { expected: 'an ISO 8601 duration', example: 'P3DT4H', isDate: false },
  email: { expected: 'an e-mail address', example: 'name@example.com', isDate: false },
  'idn-email': { expected: 'an e-mail address', example: 'name@example.com', isDate: false },
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
