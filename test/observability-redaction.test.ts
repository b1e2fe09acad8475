/**
 * The one redactor (src/core/redact.ts) as observability uses it: the literal checks that skip clean
 * text give exactly the output of running every pattern, and extra keys are honoured.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, DEFAULT_SECRET_PATTERNS } from '../src/core/redact.ts';

/** The oracle: every built-in pattern replaced in turn, with no skipping (the redactor's algorithm before its literal checks). */
function referenceText(input: string): string {
  let output = input;
  for (const pattern of DEFAULT_SECRET_PATTERNS) {
    output = output.replace(new RegExp(pattern.source, pattern.flags), (match: string, ...groups: unknown[]) => {
      const prefix = typeof groups[0] === 'string' && /^(?:[?&]|\/\/)/.test(groups[0]) ? groups[0] : '';
      return match === prefix ? match : `${prefix}***`;
    });
  }
  return output;
}
const redactor = createRedactor();

const fragments = [
  'mia.li3818@example.com',
  'a@b.co',
  'Bearer tok9f8e7d6c5b4a3210fedcba',
  'basic dXNlcjpwYXNz',
  'sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1',
  'sk-short',
  'ghp_0123456789abcdefghijABCDEFGHIJ',
  'xoxb-1234567890-abc',
  'AKIAABCDEFGHIJKLMNOP',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtaWEifQ.c2lnbmF0dXJl',
  'https://user:pa55@host/x?api_key=abc&page=2#frag',
  '?token=zzz',
  'HAT001',
  'reservation ZFA04Y',
  ' ',
  '\n',
  '"',
  '@',
  'Bearer',
  '//',
];

describe('redactor literal checks', () => {
  it('give exactly the output of running every pattern', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...fragments), fc.string({ maxLength: 12 })), { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        expect(redactor.text(text)).toBe(referenceText(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('masks what it should and returns clean text unchanged', () => {
    expect(redactor.text('call_6f1b0e4e-7f0e-4b1e-9f1e-0a0b0c0d0e0f')).toBe('call_6f1b0e4e-7f0e-4b1e-9f1e-0a0b0c0d0e0f');
    expect(redactor.text('mail mia.li3818@example.com with Bearer abc.def and sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1')).toBe('mail *** with *** and ***');
    expect(redactor.text('GET https://api.example.com/v1?api_key=abc123&x=1')).toBe('GET https://api.example.com/v1?api_key=***&x=1');
  });

  it('honours extra keys per call (compiled once per array) on top of the configured ones', () => {
    const toolKeys = ['passport*'];
    const value = { passport_number: 'X123', password: 'p', nested: [{ passportId: 'Y' }], note: 'ok' };
    expect(redactor.value(value, toolKeys)).toEqual({ passport_number: '***', password: '***', nested: [{ passportId: '***' }], note: 'ok' });
    expect(redactor.value(value, toolKeys)).toEqual(redactor.value(value, ['passport*']));
    expect(redactor.value(value)).toEqual({ passport_number: 'X123', password: '***', nested: [{ passportId: 'Y' }], note: 'ok' });
  });
});
