/**
 * The one redactor (src/core/redact.ts) as observability uses it: it masks at least everything the
 * former regular-expression rules masked (they are the oracle here), leaves clean text alone, is
 * idempotent, and extra keys are honoured.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../src/core/redact.ts';
import { compileKeyMatcher, DEFAULT_SENSITIVE_KEYS } from '../src/core/redact-keys.ts';
import { scanSecrets } from '../src/core/redact-scan.ts';

/**
 * The former rules, each run on the original text. Deliberate differences of the scanner, applied
 * to the oracle: URL credentials keep their `@` and end at `?`, `#`, quotes and angle brackets;
 * `Basic` needs a credential-looking token (a digit, `+/=`, or an upper-case letter after the
 * first), so "Basic validation" stays.
 */
const FORMER_RULES: ReadonlyArray<{ pattern: RegExp; keepPrefix?: boolean; dropLast?: boolean; basic?: boolean }> = [
  { pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g },
  { pattern: /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*/gi, basic: true },
  { pattern: /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}/g },
  { pattern: /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}/g },
  { pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
  { pattern: /\bAKIA[0-9A-Z]{16}\b/g },
  { pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { pattern: /([?&](?:api[_-]?key|key|token|access_token|secret|signature|sig|password)=)[^&#\s"']+/gi, keepPrefix: true },
  { pattern: /(\/\/)[^/?#\s:@"'<>`]+:[^/?#\s@"'<>`]+@/g, keepPrefix: true, dropLast: true },
];

function credentialLooking(token: string): boolean {
  return token.length >= 4 && /[0-9+/=]|.[A-Z]/.test(token);
}

/** Code units the former rules mask, as a boolean per position. */
function formerMask(text: string): boolean[] {
  const masked = new Array<boolean>(text.length).fill(false);
  for (const rule of FORMER_RULES) {
    for (const match of text.matchAll(new RegExp(rule.pattern.source, rule.pattern.flags))) {
      if (rule.basic && /^basic/i.test(match[0]) && !credentialLooking(match[0].replace(/^basic\s+/i, ''))) continue;
      const start = match.index + (rule.keepPrefix ? (match[1]?.length ?? 0) : 0);
      const end = match.index + match[0].length - (rule.dropLast ? 1 : 0);
      for (let index = start; index < end; index += 1) masked[index] = true;
    }
  }
  return masked;
}

const scanOptions = { isSensitiveKey: compileKeyMatcher(DEFAULT_SENSITIVE_KEYS).matchesNormal };

function scannerMask(text: string): boolean[] {
  const masked = new Array<boolean>(text.length).fill(false);
  const { ranges } = scanSecrets(text, scanOptions);
  for (let index = 0; index < ranges.length; index += 2) for (let at = ranges[index]!; at < ranges[index + 1]!; at += 1) masked[at] = true;
  return masked;
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

describe('redactor rules', () => {
  it('mask at least every code unit the former regular-expression rules masked', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...fragments), fc.string({ maxLength: 12 })), { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        const former = formerMask(text);
        const now = scannerMask(text);
        const missed = former.flatMap((masked, index) => (masked && !now[index] ? [index] : []));
        expect(missed, JSON.stringify(text)).toEqual([]);
      }),
      { numRuns: 3000 },
    );
  });

  it('are idempotent: redacting redacted text changes nothing', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...fragments, 'password=hunter2', 'pwd: x', '"secret": "y"', '4111 1111 1111 1111'), fc.string({ maxLength: 12 })), {
          maxLength: 12,
        }),
        (parts) => {
          // Fragments apart: a secret glued to a word is not at a word boundary, the same one glued to the mask is.
          const once = redactor.text(parts.join(' '));
          expect(redactor.text(once)).toBe(once);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('leave clean text unchanged: identifiers, dates, prose, order numbers', () => {
    const clean = [
      'reservation',
      'ZFA04Y',
      'HAT001',
      ' ',
      ', ',
      '. ',
      'flight',
      '2024-05-15',
      '12:30',
      'call_6f1b0e4e-7f0e-4b1e-9f1e-0a0b0c0d0e0f',
      'order 4111111111111112',
      '1715785200000',
      'status: ok',
      'a=b',
      '(x)',
      'Basic plan',
      'plan',
      'https://api.example.com/v1/items?page=2',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...clean), { maxLength: 16 }), (parts) => {
        const text = parts.join(' ');
        expect(redactor.text(text)).toBe(text);
      }),
      { numRuns: 1000 },
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
