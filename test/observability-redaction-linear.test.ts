/**
 * The redactor's built-in rules run in time linear in their input. Every adversarial 1 MB input
 * (test/observability-redaction-inputs.ts: one `@` after a megabyte of word characters, `a.a.a.`,
 * `aaaa…=`, `eyJ` repeated, digits for Luhn, `Bearer ` repeated, …) is redacted in a worker thread
 * under a hard bound, and the scanner's work (characters examined, counted by the scanner) grows
 * linearly from 1 KB to 1 MB. No wall time is asserted in-process.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileKeyMatcher, DEFAULT_SENSITIVE_KEYS } from '../src/core/redact-keys.ts';
import { scanSecrets } from '../src/core/redact-scan.ts';
import { ADVERSARIAL_INPUTS } from './observability-redaction-inputs.ts';
import { runBounded } from './support/run-bounded.ts';

const INPUTS = new URL('./observability-redaction-inputs.ts', import.meta.url).href;
const MEGABYTE = 1_000_000;
const options = { isSensitiveKey: compileKeyMatcher(DEFAULT_SENSITIVE_KEYS).matchesNormal };

describe('linear-time redaction', () => {
  it('redacts every adversarial 1 MB input in a worker under a hard bound, with work 1 MB ≤ 1.5 × 1,000 × work 1 KB', async () => {
    type Row = { name: string; stepsSmall: number; stepsLarge: number; outputLength: number };
    const outcome = await runBounded<Row[]>(INPUTS, 'redactAdversarialInputs', { length: MEGABYTE }, 60_000);
    expect(outcome.ok, outcome.ok ? '' : `${outcome.reason}${outcome.reason === 'error' ? `: ${outcome.message}` : ''}`).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.value.map((row) => row.name)).toEqual(Object.keys(ADVERSARIAL_INPUTS));
    const superLinear = outcome.value
      .filter((row) => row.stepsLarge > 1.5 * 1000 * row.stepsSmall)
      .map((row) => `${row.name}: ${row.stepsSmall} → ${row.stepsLarge}`);
    expect(superLinear).toEqual([]);
    // And in absolute terms: at most 20 characters examined per character of input.
    const heavy = outcome.value.filter((row) => row.stepsLarge > 20 * MEGABYTE).map((row) => `${row.name}: ${row.stepsLarge}`);
    expect(heavy).toEqual([]);
    for (const row of outcome.value) expect(row.outputLength, row.name).toBeGreaterThan(0);
  }, 90_000);

  it('the bound catches a quadratic rule: the old e-mail pattern on 100 KB with one @ is stopped', async () => {
    const outcome = await runBounded<number>(INPUTS, 'redactWithBacktrackingEmailRule', { length: 100_000 }, 3_000);
    expect(outcome).toMatchObject({ ok: false, reason: 'timeout' });
  }, 20_000);

  it('any text: at most 20 characters examined per character (fast-check over secret-shaped fragments)', () => {
    const fragments = [
      '@',
      'a',
      '.',
      '=',
      ':',
      '"',
      '\\',
      '/',
      '//',
      'eyJ',
      'sk-',
      'ghp_',
      'xoxb-',
      'AKIA',
      'AIza',
      'Bearer ',
      'Basic ',
      'password',
      'pwd',
      '?token=',
      '&',
      '4111',
      ' ',
      '-',
      '1',
      '-----BEGIN PRIVATE KEY-----',
      '-----END ',
      'secret_access_key',
      '\n',
    ];
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...fragments), fc.string({ maxLength: 6 })), { maxLength: 400 }), fc.boolean(), (parts, openEnd) => {
        const text = parts.join('');
        const { steps } = scanSecrets(text, { ...options, openEnd });
        expect(steps).toBeLessThanOrEqual(20 * text.length + 40);
      }),
      { numRuns: 500 },
    );
  });
});
