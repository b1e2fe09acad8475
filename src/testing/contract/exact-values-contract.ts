import { describe, expect, it } from 'vitest';
import type { DeadLetterQueue } from '../../ground/ports/stores.ts';
import type { JsonValue, RunCheckpoint } from '../../ground/ports/run-journal.ts';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

/** Nesting depth of the deep value: deep, and well within what `JSON.stringify` handles. */
const DEPTH = 1_000;

/** An array nested `depth` levels, holding `leaf` at the bottom. */
function nested(depth: number, leaf: JsonValue): JsonValue {
  let value: JsonValue = leaf;
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

/**
 * Strings stores get wrong: `\u0000` (PostgreSQL `text` and `jsonb` refuse it), lone surrogates
 * (UTF-8 drivers turn them into U+FFFD), the escape mark U+0001 that an escaping store must itself
 * escape, and a deep value.
 */
function awkwardValue(): { [key: string]: JsonValue } {
  return {
    nul: 'before\u0000after',
    onlyNul: '\u0000',
    loneHigh: 'x\ud800y',
    loneLow: '\udc00',
    reversedPair: '\udc00\ud800',
    pair: '😀',
    mark: '\u0001starts with the escape mark',
    controls: '\u0001\u0002\u001f\u007f',
    separators: '\u2028\u2029',
    'key\u0000with nul': 'a key holding \u0000',
    '\ud800': 'a lone surrogate as key',
    list: ['\u0000', '\ud83d', null, 0, true],
    deep: nested(DEPTH, 'bottom\u0000\udfff'),
  };
}

/** Ids and keys that are different strings but that a lossy store would confuse (U+FFFD) or reject (`\u0000`). */
const NUL_KEY = 'k\u0000\ud800';
const REPLACED_KEY = 'k\u0000\ufffd';
const MARK_KEY = '\u0001k';

/**
 * Contract that every store keeps any JSON value and any string exactly, as the memory stores do:
 * `\u0000`, lone surrogates, U+0001 and deep values round-trip through conversations, runs, the
 * ledger, both dead-letter queues, breaker state and the run queue (ids, bodies and keys included),
 * and keys differing only where a lossy store would replace a character stay apart. A store that
 * fails it makes every delivery of a message holding such a string fail forever.
 */
export function describeExactValuesContract(makeStores: MakeStores): void {
  describe('exact values (\\u0000, lone surrogates, deep values)', () => {
    const harness = useStoresHarness(makeStores);

    it('round-trip through conversations, under refs holding them', async () => {
      const { conversations } = harness().stores;
      const messages = [{ role: 'tool', content: awkwardValue() }, 'a\u0000b'];
      await conversations.put(NUL_KEY, messages);
      await conversations.put(REPLACED_KEY, ['other']);
      await conversations.put(MARK_KEY, ['marked']);
      expect(await conversations.get(NUL_KEY)).toEqual(messages);
      expect(await conversations.get(REPLACED_KEY)).toEqual(['other']);
      expect(await conversations.get(MARK_KEY)).toEqual(['marked']);
      await conversations.delete(NUL_KEY);
      expect(await conversations.get(NUL_KEY)).toBeUndefined();
      expect(await conversations.get(REPLACED_KEY)).toEqual(['other']);
    });

    it('round-trip through run checkpoints, in every field', async () => {
      const { runs } = harness().stores;
      const checkpoint: RunCheckpoint = {
        runId: `run_${NUL_KEY}`,
        messageId: 'message\u0000\udc00',
        status: 'running',
        stepIndex: 3,
        conversationRef: `conv_${NUL_KEY}`,
        tokensSpent: { input: 1, output: 2 },
        toolAttempts: { 'tool\u0000\ud800': 2 },
        data: awkwardValue(),
        updatedAt: '2026-01-01T00:00:00.000Z',
      };
      await runs.put(checkpoint);
      await runs.put({ ...checkpoint, runId: `run_${REPLACED_KEY}`, data: { other: true } });
      expect(await runs.get(`run_${NUL_KEY}`)).toEqual(checkpoint);
      expect((await runs.get(`run_${REPLACED_KEY}`))?.data).toEqual({ other: true });
    });

    it('round-trip through the idempotency ledger, under keys holding them', async () => {
      const { ledger } = harness().stores;
      expect(await ledger.putIfAbsent(NUL_KEY, awkwardValue())).toEqual({ stored: true, value: awkwardValue() });
      expect(await ledger.putIfAbsent(NUL_KEY, 'second')).toEqual({ stored: false, value: awkwardValue() });
      expect(await ledger.putIfAbsent(REPLACED_KEY, 'another key')).toEqual({ stored: true, value: 'another key' });
      expect(await ledger.putIfAbsent(MARK_KEY, '\u0000')).toEqual({ stored: true, value: '\u0000' });
      expect(await ledger.get(NUL_KEY)).toEqual(awkwardValue());
      await ledger.delete(NUL_KEY);
      expect(await ledger.get(NUL_KEY)).toBeUndefined();
      expect(await ledger.get(REPLACED_KEY)).toBe('another key');
    });

    it('round-trip through both dead-letter queues, pushOnce keys included, and count their bytes', async () => {
      for (const dlq of [harness().stores.messageDlq, harness().stores.toolDlq] as DeadLetterQueue<unknown>[]) {
        const id = await dlq.push(awkwardValue());
        expect((await dlq.get(id))?.entry).toEqual(awkwardValue());
        const keyed = await dlq.pushOnce(NUL_KEY, { raw: '{"input":"\u0000"}' });
        expect(keyed.added).toBe(true);
        expect(await dlq.pushOnce(NUL_KEY, 'again')).toEqual({ id: keyed.id, added: false });
        expect((await dlq.pushOnce(REPLACED_KEY, 'another key')).added).toBe(true);
        expect((await dlq.pushOnce(MARK_KEY, 'marked key')).added).toBe(true);
        expect((await dlq.list()).map((record) => record.entry)).toEqual([awkwardValue(), { raw: '{"input":"\u0000"}' }, 'another key', 'marked key']);
        const bytes = [awkwardValue(), { raw: '{"input":"\u0000"}' }, 'another key', 'marked key'].reduce<number>(
          (sum, entry) => sum + new TextEncoder().encode(JSON.stringify(entry)).length,
          0,
        );
        expect(await dlq.bytes()).toBe(bytes);
      }
    });

    it('round-trip through breaker state, under keys holding them', async () => {
      const { breakers } = harness().stores;
      const { next } = await breakers.update(NUL_KEY, () => awkwardValue());
      expect(next).toEqual(awkwardValue());
      await breakers.update(REPLACED_KEY, () => 'another key');
      expect(await breakers.get(NUL_KEY)).toEqual(awkwardValue());
      const second = await breakers.update<JsonValue>(NUL_KEY, (current) => ({ before: current ?? null }));
      expect(second.previous).toEqual(awkwardValue());
      expect(await breakers.get(REPLACED_KEY)).toBe('another key');
    });

    it('round-trip through the run queue as ids and bodies, and keep such ids apart', async () => {
      const { queue } = harness().stores;
      const body = '{"input":"a\u0000b"}\ud800\u0001';
      expect(await queue.enqueue({ id: NUL_KEY, body })).toBe(NUL_KEY);
      await queue.enqueue({ id: REPLACED_KEY, body: '\u0001' });
      await queue.enqueue({ id: MARK_KEY, body: '\udc00' });
      expect(await queue.size()).toBe(3);
      const first = await queue.reserve(30_000);
      expect(first).toMatchObject({ id: NUL_KEY, body, deliveries: 1 });
      expect(await queue.reserve(30_000)).toMatchObject({ id: REPLACED_KEY, body: '\u0001' });
      expect(await queue.reserve(30_000)).toMatchObject({ id: MARK_KEY, body: '\udc00' });
      expect(await queue.extendLease(NUL_KEY, 1, 30_000)).toBe(true);
      await queue.ack(NUL_KEY);
      expect(await queue.size()).toBe(2);
      await queue.release(REPLACED_KEY, { countDelivery: false });
      expect(await queue.reserve(30_000)).toMatchObject({ id: REPLACED_KEY, body: '\u0001', deliveries: 1 });
      await queue.enqueue({ id: NUL_KEY, body: 'after ack' });
      expect(await queue.size()).toBe(2);
    });
  });
}
