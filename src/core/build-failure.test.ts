import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactBounded, truncateText, utf8ByteLength } from './build-failure.ts';
import { createRedactor } from './redact.ts';

const encoder = new TextEncoder();

describe('utf8ByteLength', () => {
  it('equals the length TextEncoder produces, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)) }), (text, surrogates) => {
        const mixed = text + surrogates + text;
        expect(utf8ByteLength(mixed)).toBe(encoder.encode(mixed).length);
      }),
    );
  });
});

describe('truncateText', () => {
  it('returns text that fits unchanged and cuts the rest to the byte bound with a marker', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: 15, max: 300 }), (text, maxBytes) => {
        const cut = truncateText(text, maxBytes);
        const bytes = encoder.encode(cut).length;
        if (encoder.encode(text).length <= maxBytes) expect(cut).toBe(text);
        else {
          expect(bytes).toBeLessThanOrEqual(maxBytes);
          expect(cut.endsWith('… [truncated]')).toBe(true);
          expect(text.startsWith(cut.slice(0, -'… [truncated]'.length))).toBe(true);
        }
      }),
    );
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(50);
    for (let maxBytes = 15; maxBytes < 60; maxBytes += 1) {
      const kept = truncateText(text, maxBytes).slice(0, -'… [truncated]'.length);
      expect(kept.length % 2).toBe(0);
      expect(kept).toBe('😀'.repeat(kept.length / 2));
    }
  });

  it('keeps as many bytes as fit: 1 MB of ASCII cut to 100 bytes keeps 85 of them plus the marker', () => {
    const cut = truncateText('a'.repeat(1_000_000), 100);
    expect(cut).toBe(`${'a'.repeat(100 - encoder.encode('… [truncated]').length)}… [truncated]`);
  });
});

describe('redactBounded', () => {
  const redactor = createRedactor();

  it('scans only the bound plus the margin: the redactor sees at most maxBytes + 4096 code units of a 1 MB text', () => {
    const seen: number[] = [];
    const spy = { text: (text: string) => (seen.push(text.length), redactor.text(text)) };
    const out = redactBounded(spy, 'x'.repeat(1_000_000), 200);
    expect(seen).toEqual([200 + 4096]);
    expect(encoder.encode(out).length).toBeLessThanOrEqual(200);
    expect(out.endsWith('… [truncated]')).toBe(true);
  });

  it('redacts a secret inside the bound', () => {
    const out = redactBounded(redactor, `token Bearer abcdefghijklmnopqrstuvwxyz0123456789 ${'y'.repeat(1_000_000)}`, 200);
    expect(out).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789');
    expect(encoder.encode(out).length).toBeLessThanOrEqual(200);
  });

  it('widens the margin when redaction shrinks the cut by more than half of it', () => {
    const seen: number[] = [];
    const out = redactBounded({ text: (input) => (seen.push(input.length), 'short') }, 'z'.repeat(50_000), 100);
    // 4196, then margins of 8192, 16384, 32768 code units, then the whole 50,000-unit text fits.
    expect(seen).toEqual([4196, 8292, 16484, 32868, 50_000]);
    expect(out).toBe('short');
  });

  it('does not let a secret split by the first cut into the output when redaction shrinks the text before it', () => {
    // Many e-mail addresses shrink under redaction, pulling the tail of the first cut forward; the
    // secret at the first cut is split there and would not be recognised.
    const emails = 'someone.with.a.long.name@example.com '.repeat(200);
    const secret = 'SECRETSECRETSECRET';
    const text = emails + 'q'.repeat(Math.max(0, 100 + 4096 - emails.length - 9)) + secret + 'r'.repeat(10_000);
    const masking = { text: (input: string) => input.replace(/someone\.with\.a\.long\.name@example\.com/g, '*').replace(/SECRETSECRETSECRET/g, '***') };
    const out = redactBounded(masking, text, 8_000);
    expect(out).not.toContain('SECRET');
  });

  it('never leaves a lone surrogate at the first cut', () => {
    const text = `${'a'.repeat(99 + 4096)}${'😀'.repeat(10)}`;
    const out = redactBounded({ text: (input) => input }, text, 100);
    expect(encoder.encode(out).length).toBeLessThanOrEqual(100);
    expect(/[\ud800-\udbff](?![\udc00-\udfff])/.test(out)).toBe(false);
  });
});
