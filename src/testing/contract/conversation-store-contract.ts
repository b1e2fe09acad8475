import { describe, expect, it } from 'vitest';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

const SEVEN_DAYS_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Contract of `ConversationStore`: round trips, replacement, isolation from callers, TTL.
 */
export function describeConversationStoreContract(makeStores: MakeStores): void {
  describe('ConversationStore', () => {
    const harness = useStoresHarness(makeStores);
    const sample = () => [
      { role: 'system', content: 'You are a helpful agent.' },
      { role: 'user', content: 'Réservez un vol — 東京 ✈️ "quoted"\nnext line' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'search', args: { q: 'x', n: 3, exact: true } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"status":"failed"}', numbers: [0, -1, 0.1, 1e21, 9007199254740991] },
    ];

    it('returns undefined for a conversation that was never stored', async () => {
      expect(await harness().stores.conversations.get('conv_missing')).toBeUndefined();
    });

    it('round-trips the messages exactly', async () => {
      const { conversations } = harness().stores;
      await conversations.put('conv_a', sample());
      expect(await conversations.get('conv_a')).toEqual(sample());
      await conversations.put('conv_empty', []);
      expect(await conversations.get('conv_empty')).toEqual([]);
    });

    it('replaces the whole conversation on put and keeps conversations apart', async () => {
      const { conversations } = harness().stores;
      await conversations.put('conv_a', sample());
      await conversations.put('conv_b', [{ role: 'user', content: 'b' }]);
      await conversations.put('conv_a', [{ role: 'user', content: 'replaced' }]);
      expect(await conversations.get('conv_a')).toEqual([{ role: 'user', content: 'replaced' }]);
      expect(await conversations.get('conv_b')).toEqual([{ role: 'user', content: 'b' }]);
    });

    it('does not let callers mutate stored messages', async () => {
      const { conversations } = harness().stores;
      const messages: { role: string; content: string }[] = [{ role: 'user', content: 'original' }];
      await conversations.put('conv_a', messages);
      messages[0]!.content = 'changed after put';
      messages.push({ role: 'user', content: 'pushed after put' });
      const read = (await conversations.get('conv_a')) as { content: string }[];
      read[0]!.content = 'changed after get';
      expect(await conversations.get('conv_a')).toEqual([{ role: 'user', content: 'original' }]);
    });

    it('deletes a conversation, and deleting an unknown one is a no-op', async () => {
      const { conversations } = harness().stores;
      await conversations.put('conv_a', sample());
      await conversations.delete('conv_a');
      await conversations.delete('conv_never');
      expect(await conversations.get('conv_a')).toBeUndefined();
    });

    it('expires a conversation exactly when its TTL has passed', async () => {
      const { stores, clock, conversationTtlMs = SEVEN_DAYS_MS } = harness();
      await stores.conversations.put('conv_a', sample());
      await clock.advance(conversationTtlMs - 1);
      expect(await stores.conversations.get('conv_a')).toEqual(sample());
      await clock.advance(1);
      expect(await stores.conversations.get('conv_a')).toBeUndefined();
    });

    it('drops no conversation before its time while others expire', async () => {
      const { stores, clock, conversationTtlMs = SEVEN_DAYS_MS } = harness();
      await stores.conversations.put('conv_first', [{ n: 1 }]);
      await clock.advance(1);
      await stores.conversations.put('conv_second', [{ n: 2 }]);
      await clock.advance(conversationTtlMs - 1);
      await stores.conversations.put('conv_third', [{ n: 3 }]);
      expect(await stores.conversations.get('conv_first')).toBeUndefined();
      expect(await stores.conversations.get('conv_second')).toEqual([{ n: 2 }]);
      expect(await stores.conversations.get('conv_third')).toEqual([{ n: 3 }]);
    });

    it('restarts the TTL on every put', async () => {
      const { stores, clock, conversationTtlMs = SEVEN_DAYS_MS } = harness();
      await stores.conversations.put('conv_a', [{ n: 1 }]);
      await stores.conversations.put('conv_old', [{ n: 0 }]);
      await clock.advance(conversationTtlMs - 10);
      await stores.conversations.put('conv_a', [{ n: 2 }]);
      await clock.advance(20);
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 2 }]);
      expect(await stores.conversations.get('conv_old')).toBeUndefined();
    });
  });
}
