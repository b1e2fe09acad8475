import { describe, expect, it } from 'vitest';
import { newConversationRef } from './conversation-ref.ts';

describe('newConversationRef', () => {
  it('is conv_ and 32 hex digits: the time first, then randomness', () => {
    const ref = newConversationRef(0x0123456789ab);
    expect(ref).toMatch(/^conv_0123456789ab[0-9a-f]{20}$/);
  });

  it('sorts by creation time, whatever the random part', () => {
    const refs = Array.from({ length: 200 }, (_, index) => newConversationRef(1_700_000_000_000 + index * 7));
    expect([...refs].sort()).toEqual(refs);
  });

  it('never repeats within one millisecond', () => {
    const refs = new Set(Array.from({ length: 10_000 }, () => newConversationRef(1_700_000_000_000)));
    expect(refs.size).toBe(10_000);
  });

  it('clamps a time outside 48 bits instead of growing or going negative', () => {
    expect(newConversationRef(-5)).toMatch(/^conv_000000000000[0-9a-f]{20}$/);
    expect(newConversationRef(Number.NaN)).toMatch(/^conv_000000000000[0-9a-f]{20}$/);
    expect(newConversationRef(2 ** 60)).toMatch(/^conv_ffffffffffff[0-9a-f]{20}$/);
  });
});
