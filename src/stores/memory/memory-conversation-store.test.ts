import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunCheckpoint } from '../../ground/ports/run-journal.ts';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { createMemoryStores } from './memory-stores.ts';

const TTL_MS = 100;

const checkpoint = (conversationRef: string): RunCheckpoint => ({
  runId: 'run_a',
  messageId: 'm_a',
  status: 'running',
  stepIndex: 0,
  conversationRef,
  tokensSpent: { input: 0, output: 0 },
  toolAttempts: {},
  updatedAt: '2026-01-01T00:00:00.000Z',
});

type Operation =
  | { kind: 'put'; ref: number; length: number }
  | { kind: 'commit'; ref: number; add: number; storedCount: number }
  | { kind: 'delete'; ref: number }
  | { kind: 'get'; ref: number }
  | { kind: 'advance'; ms: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), ref: fc.nat(12), length: fc.nat(3) }),
  fc.record({ kind: fc.constant('commit' as const), ref: fc.nat(12), add: fc.nat(2), storedCount: fc.nat(6) }),
  fc.record({ kind: fc.constant('delete' as const), ref: fc.nat(12) }),
  fc.record({ kind: fc.constant('get' as const), ref: fc.nat(12) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 60 }) }),
);

describe('memory conversation store', () => {
  it('matches a plain map with expiry times through any writes, deletes, reads and time (sweeps and compactions included)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 400 }), async (operations) => {
        const clock = createFakeClock();
        const stores = createMemoryStores({ clock, conversationTtlMs: TTL_MS });
        const model = new Map<string, { messages: unknown[]; expiresAtMs: number }>();
        const live = (ref: string) => {
          const held = model.get(ref);
          return held !== undefined && held.expiresAtMs > clock.now() ? held.messages : undefined;
        };
        let written = 0;
        for (const op of operations) {
          const ref = 'ref' in op ? `conv_${op.ref}` : '';
          if (op.kind === 'put') {
            const messages = Array.from({ length: op.length }, () => ({ n: (written += 1) }));
            await stores.conversations.put(ref, messages);
            model.set(ref, { messages, expiresAtMs: clock.now() + TTL_MS });
          } else if (op.kind === 'commit') {
            const held = live(ref) ?? [];
            const messages = [...held, ...Array.from({ length: op.add }, () => ({ n: (written += 1) }))];
            // storedCount right (append) or wrong (the whole array replaces it): the result is the same
            const storedCount = op.storedCount % 2 === 0 ? held.length : op.storedCount;
            await stores.journal.commit({ conversationRef: ref, messages, storedCount, checkpoint: checkpoint(ref), calls: [] });
            model.set(ref, { messages, expiresAtMs: clock.now() + TTL_MS });
          } else if (op.kind === 'delete') {
            await stores.conversations.delete(ref);
            model.delete(ref);
          } else if (op.kind === 'get') {
            expect(await stores.conversations.get(ref)).toEqual(live(ref));
          } else {
            await clock.advance(op.ms);
          }
        }
        for (let index = 0; index <= 12; index++) expect(await stores.conversations.get(`conv_${index}`)).toEqual(live(`conv_${index}`));
      }),
      { numRuns: 300, seed: 11 },
    );
  });

  it('keeps each of many conversations until its own time while thousands expire around it', async () => {
    const clock = createFakeClock();
    const stores = createMemoryStores({ clock, conversationTtlMs: 1_000 });
    const expected = new Map<string, { messages: unknown[]; expiresAtMs: number }>();
    const put = async (ref: string, messages: unknown[]) => {
      await stores.conversations.put(ref, messages);
      expected.set(ref, { messages, expiresAtMs: clock.now() + 1_000 });
    };
    await put('conv_kept', [{ kept: true }]);
    for (let index = 0; index < 5_000; index++) {
      await clock.advance(1);
      await put(`conv_${index % 700}`, [{ index }]);
      if (index % 97 === 0) await put('conv_kept', [{ kept: index }]);
      if (index % 13 === 0) {
        await stores.conversations.delete(`conv_${(index + 350) % 700}`);
        expected.delete(`conv_${(index + 350) % 700}`);
      }
    }
    let alive = 0;
    for (const ref of ['conv_kept', ...Array.from({ length: 700 }, (_, index) => `conv_${index}`)]) {
      const held = expected.get(ref);
      const messages = held !== undefined && held.expiresAtMs > clock.now() ? held.messages : undefined;
      if (messages !== undefined) alive += 1;
      expect(await stores.conversations.get(ref)).toEqual(messages);
    }
    expect(alive).toBeGreaterThan(500);
    await clock.advance(1_000);
    expect(await stores.conversations.get('conv_kept')).toBeUndefined();
  });
});
