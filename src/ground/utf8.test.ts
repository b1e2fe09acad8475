import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { truncateUtf8, utf8ByteLength } from './utf8.ts';

const encoder = new TextEncoder();

describe('utf8ByteLength', () => {
  it('equals the length TextEncoder produces, lone surrogates included', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)) }),
        (text, surrogates) => {
          const mixed = text + surrogates + text;
          expect(utf8ByteLength(mixed)).toBe(encoder.encode(mixed).length);
        },
      ),
    );
  });
});

describe('truncateUtf8', () => {
  it('returns text that fits unchanged and cuts the rest to the byte bound with a marker', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: 15, max: 300 }), (text, maxBytes) => {
        const cut = truncateUtf8(text, maxBytes);
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
      const kept = truncateUtf8(text, maxBytes).slice(0, -'… [truncated]'.length);
      expect(kept.length % 2).toBe(0);
      expect(kept).toBe('😀'.repeat(kept.length / 2));
    }
  });

  it('keeps as many bytes as fit: 1 MB of ASCII cut to 100 bytes keeps 85 of them plus the marker', () => {
    const cut = truncateUtf8('a'.repeat(1_000_000), 100);
    expect(cut).toBe(`${'a'.repeat(100 - encoder.encode('… [truncated]').length)}… [truncated]`);
  });
});
