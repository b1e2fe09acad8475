import { describe, expect, it } from 'vitest';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

type Counter = { count: number; history: string[] };

/** Contract of `BreakerStateStore`: atomic read-modify-write that loses no concurrent update. */
export function describeBreakerStateStoreContract(makeStores: MakeStores): void {
  describe('BreakerStateStore', () => {
    const harness = useStoresHarness(makeStores);

    it('returns undefined for an unknown key', async () => {
      expect(await harness().stores.breakers.get('search_web')).toBeUndefined();
    });

    it('passes the current record to fn and stores what it returns', async () => {
      const { breakers } = harness().stores;
      const seen: unknown[] = [];
      const first = await breakers.update<Counter>('search_web', (current) => {
        seen.push(current);
        return { count: (current?.count ?? 0) + 1, history: [...(current?.history ?? []), 'open'] };
      });
      expect(first).toEqual({ previous: undefined, next: { count: 1, history: ['open'] } });
      const second = await breakers.update<Counter>('search_web', (current) => ({
        count: (current?.count ?? 0) + 1,
        history: [...(current?.history ?? []), 'half-open'],
      }));
      expect(second).toEqual({ previous: { count: 1, history: ['open'] }, next: { count: 2, history: ['open', 'half-open'] } });
      expect(seen).toEqual([undefined]);
      expect(await breakers.get('search_web')).toEqual({ count: 2, history: ['open', 'half-open'] });
      expect(await breakers.get('other_tool')).toBeUndefined();
    });

    it('loses no update among 50 concurrent increments', async () => {
      const { breakers } = harness().stores;
      const increment = (current: Counter | undefined): Counter => ({ count: (current?.count ?? 0) + 1, history: [] });
      const results = await Promise.all(Array.from({ length: 50 }, () => breakers.update<Counter>('tool', increment)));
      expect(await breakers.get('tool')).toEqual({ count: 50, history: [] });
      const counts = results.map((result) => result.next.count).sort((left, right) => left - right);
      expect(counts).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
    });

    it('does not let callers mutate the stored record', async () => {
      const { breakers } = harness().stores;
      const record: Counter = { count: 1, history: ['a'] };
      const { next } = await breakers.update<Counter>('tool', () => record);
      record.history.push('mutated input');
      next.history.push('mutated output');
      const read = (await breakers.get('tool')) as Counter;
      read.history.push('mutated read');
      expect(await breakers.get('tool')).toEqual({ count: 1, history: ['a'] });
      const { previous } = await breakers.update<Counter>('tool', (current) => ({ ...current!, count: 2 }));
      previous!.history.push('mutated previous');
      expect(await breakers.get('tool')).toEqual({ count: 2, history: ['a'] });
    });
  });
}
