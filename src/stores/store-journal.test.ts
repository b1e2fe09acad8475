import { describe, expect, it } from 'vitest';
import type { RunCheckpoint } from '../ground/ports/run-journal.ts';
import { createFakeClock } from '../testing/fake-clock.ts';
import { createMemoryStores } from './memory/memory-stores.ts';
import { createStoreJournal } from './store-journal.ts';

const checkpoint: RunCheckpoint = {
  runId: 'run_a',
  messageId: 'm_a',
  status: 'running',
  stepIndex: 0,
  conversationRef: 'conv_a',
  tokensSpent: { input: 0, output: 0 },
  toolAttempts: {},
  updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('createStoreJournal', () => {
  it('writes a step through the stores it was given, as they are at the call: outcomes first, then the conversation, the checkpoint last', async () => {
    const inner = createMemoryStores({ clock: createFakeClock() });
    const calls: string[] = [];
    const stores = {
      ...inner,
      runs: { get: inner.runs.get, put: (value: RunCheckpoint) => (calls.push('runs.put'), inner.runs.put(value)) },
      ledger: { ...inner.ledger, putIfAbsent: (key: string, value: never) => (calls.push(`ledger.putIfAbsent ${key}`), inner.ledger.putIfAbsent(key, value)) },
    };
    const journal = createStoreJournal(stores);
    const conversationsPut = inner.conversations.put;
    stores.conversations = { ...inner.conversations, put: (ref, messages) => (calls.push('conversations.put'), conversationsPut(ref, messages)) };
    const outcome = { status: 'ok' };
    await journal.commit({ conversationRef: 'conv_a', messages: [{ n: 1 }], storedCount: 0, checkpoint, calls: [{ stepIndex: 0, callIndex: 0, outcome }] });
    outcome.status = 'changed';
    expect(calls).toEqual(['ledger.putIfAbsent run_a:0:0', 'conversations.put', 'runs.put']);
    expect(await inner.conversations.get('conv_a')).toEqual([{ n: 1 }]);
    expect(await inner.runs.get('run_a')).toEqual(checkpoint);
    expect(await inner.ledger.get('run_a:0:0')).toEqual({ status: 'ok' });
  });

  it('a failing read after the claim was taken ends the claim before it rejects; without a claim store every open is claimed', async () => {
    const inner = createMemoryStores({ clock: createFakeClock() });
    const journal = createStoreJournal({ ...inner, runs: { get: () => Promise.reject(new Error('down')), put: inner.runs.put } });
    await expect(journal.open('run_a', { holder: 'worker-1', leaseMs: 1_000 })).rejects.toThrow('down');
    expect(await inner.claims.get('run:run_a')).toBeUndefined();
    const unclaimed = createStoreJournal({ conversations: inner.conversations, runs: inner.runs, ledger: inner.ledger });
    expect(await unclaimed.open('run_a', { holder: 'worker-1', leaseMs: 1_000 })).toEqual({ claimed: true, checkpoint: undefined, messages: undefined });
  });
});
