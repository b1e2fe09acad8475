import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

/** Contract of `IdempotencyLedger`: first writer wins, atomically, for every JSON value. */
export function describeIdempotencyLedgerContract(makeStores: MakeStores): void {
  describe('IdempotencyLedger', () => {
    const harness = useStoresHarness(makeStores);

    it('returns undefined for an unknown key', async () => {
      expect(await harness().stores.ledger.get('run_1:0:0')).toBeUndefined();
    });

    it('stores the first value and keeps it against later ones', async () => {
      const { ledger } = harness().stores;
      const first = { status: 'success', data: { bookingId: 'B-1' } };
      expect(await ledger.putIfAbsent('run_1:0:0', first)).toEqual({ stored: true, value: first });
      expect(await ledger.putIfAbsent('run_1:0:0', { status: 'failed' })).toEqual({ stored: false, value: first });
      expect(await ledger.get('run_1:0:0')).toEqual(first);
      expect(await ledger.get('run_1:0:1')).toBeUndefined();
    });

    it('distinguishes a stored null, false, 0 or empty string from an absent key', async () => {
      const { ledger } = harness().stores;
      const values: JsonValue[] = [null, false, 0, '', [], {}];
      for (const [index, value] of values.entries()) {
        expect(await ledger.putIfAbsent(`k:${index}`, value)).toEqual({ stored: true, value });
        expect(await ledger.get(`k:${index}`)).toEqual(value);
        expect(await ledger.putIfAbsent(`k:${index}`, 'other')).toEqual({ stored: false, value });
      }
    });

    it('stores again after delete, and deleting an unknown key is a no-op', async () => {
      const { ledger } = harness().stores;
      await ledger.putIfAbsent('run_1:1:0', 'first');
      await ledger.delete('run_1:1:0');
      await ledger.delete('never');
      expect(await ledger.get('run_1:1:0')).toBeUndefined();
      expect(await ledger.putIfAbsent('run_1:1:0', 'second')).toEqual({ stored: true, value: 'second' });
    });

    it('lets exactly one of many concurrent callers store', async () => {
      const { ledger } = harness().stores;
      const results = await Promise.all(Array.from({ length: 25 }, (_, index) => ledger.putIfAbsent('run_race:0:0', { writer: index })));
      const winners = results.filter((result) => result.stored);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!.value;
      for (const result of results) expect(result.value).toEqual(winner);
      expect(await ledger.get('run_race:0:0')).toEqual(winner);
    });

    it('does not let callers mutate a recorded outcome', async () => {
      const { ledger } = harness().stores;
      const value = { items: [1, 2] };
      const { value: returned } = await ledger.putIfAbsent('k', value);
      value.items.push(3);
      (returned as { items: number[] }).items.push(4);
      const read = await ledger.get('k');
      (read as { items: number[] }).items.push(5);
      expect(await ledger.get('k')).toEqual({ items: [1, 2] });
    });
  });
}
