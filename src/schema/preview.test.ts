import { describe, expect, it } from 'vitest';
import { previewJson } from './preview.ts';

describe('previewJson', () => {
  it('serialises only what it shows: 100 previews of a 1,000,000-item array cost what 100 small ones do', () => {
    const big = Array.from({ length: 1_000_000 }, (_, index) => index);
    for (let run = 0; run < 100; run++) expect(previewJson(big, 20)).toBe('[0,1,2,3,4,5,6,7,8,…');
  });

  it('writes JSON as JSON.stringify does for small values, bigint as "5n" and a cycle as "[Circular]"', () => {
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    expect(previewJson({ a: [1, 'x', null, undefined], b: undefined, d: new Date(0), n: Number.NaN })).toBe(
      JSON.stringify({ a: [1, 'x', null, null], d: new Date(0), n: null }),
    );
    expect(previewJson({ total: 5n })).toBe('{"total":"5n"}');
    expect(previewJson(circular)).toBe('{"a":1,"self":"[Circular]"}');
    expect(
      previewJson({
        get broken() {
          throw new Error('no');
        },
      }),
    ).toBe('[object]');
  });

  it('drops a short token a cut would split (the head of a split secret may not look like one)', () => {
    const preview = previewJson(`${'word '.repeat(22)}sk-proj-Q7hT2xLm9Vw4Kp8Zr3`, 120);
    expect(preview.length).toBeLessThanOrEqual(120);
    expect(preview).not.toContain('sk-');
    expect(preview.endsWith(' …')).toBe(true);
    // A token longer than 32 characters is cut where the bound falls.
    expect(previewJson('x'.repeat(500), 120)).toBe(`"${'x'.repeat(118)}…`);
  });
});
