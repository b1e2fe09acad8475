import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprintArguments } from './fingerprint-arguments.ts';

describe('fingerprintArguments', () => {
  it('is the first 16 hex digits of the SHA-256 of the canonical JSON', () => {
    const expected = createHash('sha256').update('{"a":1,"b":[true,null,"x"]}').digest('hex').slice(0, 16);
    expect(fingerprintArguments({ b: [true, null, 'x'], a: 1 })).toBe(expected);
    expect(fingerprintArguments({ a: 1 })).toMatch(/^[0-9a-f]{16}$/);
  });

  it('ignores key order, at every depth', () => {
    expect(fingerprintArguments({ a: 1, b: { c: 2, d: [1, { e: 3, f: 4 }] } })).toBe(fingerprintArguments({ b: { d: [1, { f: 4, e: 3 }], c: 2 }, a: 1 }));
  });

  it('distinguishes different values, types and array orders', () => {
    const values = [{ a: 1 }, { a: '1' }, { a: [1, 2] }, { a: [2, 1] }, { a: null }, {}, [], '', 'x', 0, false, null, { a: { b: 1 } }];
    const fingerprints = new Set(values.map(fingerprintArguments));
    expect(fingerprints.size).toBe(values.length);
  });

  it('drops undefined properties as JSON does, and maps non-finite numbers to null', () => {
    expect(fingerprintArguments({ a: 1, b: undefined })).toBe(fingerprintArguments({ a: 1 }));
    expect(fingerprintArguments({ a: Number.NaN })).toBe(fingerprintArguments({ a: null }));
    expect(fingerprintArguments(undefined)).toBe(fingerprintArguments(null));
  });

  it('fingerprints a raw argument string as that string', () => {
    expect(fingerprintArguments('{"a":1}')).toBe(createHash('sha256').update('"{\\"a\\":1}"').digest('hex').slice(0, 16));
    expect(fingerprintArguments('{"a":1}')).not.toBe(fingerprintArguments({ a: 1 }));
  });

  it('never throws: cycles, bigint, functions, toJSON', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(fingerprintArguments(cyclic)).toBe(fingerprintArguments({ a: 1, self: '[Circular]' }));
    expect(fingerprintArguments({ n: 10n })).toBe(fingerprintArguments({ n: '10n' }));
    expect(fingerprintArguments({ f: () => 1, a: 1 })).toBe(fingerprintArguments({ a: 1 }));
    expect(fingerprintArguments({ d: new Date(0) })).toBe(fingerprintArguments({ d: '1970-01-01T00:00:00.000Z' }));
  });

  it('treats a repeated (non-cyclic) reference as a value', () => {
    const shared = { x: 1 };
    expect(fingerprintArguments({ a: shared, b: shared })).toBe(fingerprintArguments({ a: { x: 1 }, b: { x: 1 } }));
  });
});
