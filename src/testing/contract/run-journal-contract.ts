import { describe, expect, it } from 'vitest';
import type { RunCheckpoint, RunStep } from '../../ground/ports/run-journal.ts';
import type { ClaimStoreContractOptions } from './claim-store-contract.ts';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

const SEVEN_DAYS_MS = 7 * 24 * 60 * 60 * 1000;
const LEASE_MS = 30_000;
/** The lease a test waits out in real time when the claims run on the store's own clock, in ms. */
const SHORT_LEASE_MS = 300;

function stepCheckpoint(stepIndex: number, conversationRef = 'conv_a', runId = 'run_a'): RunCheckpoint {
  return {
    runId,
    messageId: 'm_a',
    status: 'running',
    stepIndex,
    conversationRef,
    tokensSpent: { input: 10 * stepIndex, output: stepIndex },
    toolAttempts: { lookup: stepIndex },
    data: { pendingStep: false },
    updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, stepIndex)).toISOString(),
  };
}

/** A step of the checkpoint's conversation. */
const step = (messages: unknown[], storedCount: number, checkpoint: RunCheckpoint, calls: RunStep['calls'] = []): RunStep => ({
  conversationRef: checkpoint.conversationRef,
  messages,
  storedCount,
  checkpoint,
  calls,
});

/**
 * Contract of `RunJournal` on `stores.journal`, read back through the bundle's own stores: an open
 * under a claim (refused while another holder has it, with the committed checkpoint and
 * conversation once taken), outcomes recorded once (first value wins, and the answer of every
 * `record`, concurrent ones included), a step committed whole
 * (appended after `storedCount`, replaced when the stored length differs, TTL restarted), a last
 * step that ends its holder's claim and only its holder's, a start step committed with the claim
 * only for a run with nothing committed (where the journal does it), `INVALID_OPTIONS` for a bad lease,
 * a message's last delivery error (the ledger row `message:<id>:last-delivery-error`; the same
 * text leaves it, another replaces it), a run's dead-letter marks (ledger rows, the first stays),
 * and what a host run keeps in it: a conversation stored without a checkpoint (read through the
 * conversation store), a call recorded by its tool-call id (the ledger row
 * `<host>:<runId>:<stepIndex>:<toolCallId>`) and a completion mark (`<host>:<runId>:completed`).
 *
 * `options.clock` says whose clock the claims' leases run on, as for `describeClaimStoreContract`:
 * with `'server'` (Redis) the test of an ended claim waits out a short lease in real time.
 */
export function describeRunJournalContract(makeStores: MakeStores, options: ClaimStoreContractOptions = {}): void {
  const serverClock = options.clock === 'server';
  describe('RunJournal', () => {
    const harness = useStoresHarness(makeStores);
    const sample = () => [
      { role: 'system', content: 'You are a helpful agent.' },
      { role: 'user', content: 'Réservez un vol — 東京 ✈️ "quoted"\nnext line' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'search', args: { q: 'x', n: 3, exact: true } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"status":"failed"}', numbers: [0, -1, 0.1, 1e21, 9007199254740991] },
    ];

    it('commit: writes the messages, the checkpoint and the call outcomes of a step, appending after storedCount', async () => {
      const { stores } = harness();
      const messages: unknown[] = sample().slice(0, 2);
      await stores.journal.commit(step(messages, 0, stepCheckpoint(0)));
      expect(await stores.conversations.get('conv_a')).toEqual(sample().slice(0, 2));
      expect(await stores.runs.get('run_a')).toEqual(stepCheckpoint(0));
      messages.push(...sample().slice(2));
      const outcome = { status: 'ok', data: { n: [1, 2.5, null, '東京'] } };
      await stores.journal.commit(step(messages, 2, stepCheckpoint(1), [{ stepIndex: 1, callIndex: 0, outcome }]));
      messages.push({ role: 'user', content: 'changed after the commit' });
      outcome.status = 'changed after the commit';
      expect(await stores.conversations.get('conv_a')).toEqual(sample());
      expect(await stores.runs.get('run_a')).toEqual(stepCheckpoint(1));
      expect(await stores.journal.recorded('run_a', 1, 0)).toEqual({ status: 'ok', data: { n: [1, 2.5, null, '東京'] } });
      expect(await stores.ledger.get('run_a:1:0')).toEqual({ status: 'ok', data: { n: [1, 2.5, null, '東京'] } });
    });

    it('commit: keeps the first outcome, replaces a conversation whose stored length is not storedCount, restarts the TTL', async () => {
      const { stores, clock, conversationTtlMs = SEVEN_DAYS_MS } = harness();
      const { journal } = stores;
      await journal.record('run_a', { stepIndex: 0, callIndex: 0, outcome: 'first' });
      await stores.conversations.put('conv_a', [{ n: 1 }, { n: 2 }, { n: 3 }]);
      // storedCount 2 while 3 are stored: the whole array replaces it (nothing is appended to the wrong place)
      await journal.commit(step([{ n: 1 }, { n: 9 }], 2, stepCheckpoint(0), [{ stepIndex: 0, callIndex: 0, outcome: 'second' }]));
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 1 }, { n: 9 }]);
      expect(await journal.recorded('run_a', 0, 0)).toBe('first');
      // storedCount beyond the messages, or a conversation never stored: the whole array
      await journal.commit(step([{ n: 0 }], 5, stepCheckpoint(1)));
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 0 }]);
      await journal.commit(step([{ n: 7 }], 1, stepCheckpoint(2, 'conv_new')));
      expect(await stores.conversations.get('conv_new')).toEqual([{ n: 7 }]);
      // every commit restarts the TTL; an expired conversation is not appended to
      await clock.advance(conversationTtlMs - 1);
      await journal.commit(step([{ n: 0 }, { n: 1 }], 1, stepCheckpoint(3)));
      await clock.advance(conversationTtlMs - 1);
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 0 }, { n: 1 }]);
      expect(await stores.conversations.get('conv_new')).toBeUndefined();
      await clock.advance(1);
      expect(await stores.conversations.get('conv_a')).toBeUndefined();
      await journal.commit(step([{ n: 0 }, { n: 1 }, { n: 2 }], 2, stepCheckpoint(4)));
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    });

    it('record, recorded, forget: one outcome per call, the first value stays until forgotten', async () => {
      const { journal } = harness().stores;
      expect(await journal.recorded('run_r', 0, 1)).toBeUndefined();
      await journal.record('run_r', { stepIndex: 0, callIndex: 1, outcome: { status: 'failed' } });
      await journal.record('run_r', { stepIndex: 0, callIndex: 1, outcome: { status: 'success' } });
      expect(await journal.recorded('run_r', 0, 1)).toEqual({ status: 'failed' });
      expect(await journal.recorded('run_r', 1, 0)).toBeUndefined();
      await journal.forget('run_r', 0, 1);
      expect(await journal.recorded('run_r', 0, 1)).toBeUndefined();
      await journal.record('run_r', { stepIndex: 0, callIndex: 1, outcome: { status: 'success' } });
      expect(await journal.recorded('run_r', 0, 1)).toEqual({ status: 'success' });
    });

    it('record: answers the outcome stored after the call, the earlier one when the call had one', async () => {
      const { stores } = harness();
      const { journal } = stores;
      const first = { status: 'failed', data: { n: [1, 2.5, null, '東京'] } };
      expect(await journal.record('run_w', { stepIndex: 0, callIndex: 1, outcome: first })).toEqual(first);
      expect(await journal.record('run_w', { stepIndex: 0, callIndex: 1, outcome: { status: 'success' } })).toEqual(first);
      // an earlier outcome written by another writer: through the ledger, by a commit, by a host run
      await stores.ledger.putIfAbsent('run_w:1:0', 'from the ledger');
      expect(await journal.record('run_w', { stepIndex: 1, callIndex: 0, outcome: 'later' })).toBe('from the ledger');
      await journal.commit(step([{ n: 1 }], 0, stepCheckpoint(2, 'conv_w', 'run_w'), [{ stepIndex: 2, callIndex: 0, outcome: 'committed' }]));
      expect(await journal.record('run_w', { stepIndex: 2, callIndex: 0, outcome: 'later' })).toBe('committed');
      const hostFirst = { status: 'success', data: 1 };
      await journal.record('ai-sdk:run_w', { stepIndex: 0, callIndex: 'call_1', outcome: hostFirst });
      expect(await journal.record('ai-sdk:run_w', { stepIndex: 0, callIndex: 'call_1', outcome: { status: 'success', data: 2 } })).toEqual(hostFirst);
      // a forgotten outcome is replaced: the new one is the answer
      await journal.forget('run_w', 0, 1);
      expect(await journal.record('run_w', { stepIndex: 0, callIndex: 1, outcome: { status: 'success' } })).toEqual({ status: 'success' });
      expect(await journal.recorded('run_w', 0, 1)).toEqual({ status: 'success' });
    });

    it('record: of concurrent writers of one call, one stores and every one gets its outcome', async () => {
      const { journal } = harness().stores;
      const answers = await Promise.all(Array.from({ length: 8 }, (_, writer) => journal.record('run_c', { stepIndex: 0, callIndex: 0, outcome: { writer } })));
      const stored = await journal.recorded('run_c', 0, 0);
      expect(answers).toEqual(Array.from({ length: 8 }, () => stored));
      expect(stored).toEqual({ writer: expect.any(Number) });
    });

    it('recordDeliveryError, lastDeliveryError: the last text per message, kept as its ledger row; the same text leaves it, another replaces it', async () => {
      const { stores } = harness();
      const { journal } = stores;
      const messageId = 'm:1 東京 ✈️';
      const key = `message:${messageId}:last-delivery-error`;
      expect(await journal.lastDeliveryError(messageId)).toBeUndefined();
      await journal.recordDeliveryError(messageId, 'Error: unsupported Unicode escape sequence');
      await journal.recordDeliveryError(messageId, 'Error: unsupported Unicode escape sequence');
      expect(await journal.lastDeliveryError(messageId)).toBe('Error: unsupported Unicode escape sequence');
      expect(await stores.ledger.get(key)).toBe('Error: unsupported Unicode escape sequence');
      const other = 'TypeError: "quoted" — Réservez\nnext line';
      await journal.recordDeliveryError(messageId, other);
      expect(await journal.lastDeliveryError(messageId)).toBe(other);
      expect(await stores.ledger.get(key)).toBe(other);
      expect(await journal.lastDeliveryError('m:2')).toBeUndefined();
      // a row at the key that is not text reads as none, and a record replaces it
      await stores.ledger.putIfAbsent('message:m:3:last-delivery-error', { message: 'boom' });
      expect(await journal.lastDeliveryError('m:3')).toBeUndefined();
      await journal.recordDeliveryError('m:3', 'Error: boom');
      expect(await journal.lastDeliveryError('m:3')).toBe('Error: boom');
      expect(await journal.lastDeliveryError(messageId)).toBe(other);
    });

    it('markDeadLettered, deadLettered: one mark per run, step and kind, kept as its ledger row; the first stays', async () => {
      const { stores } = harness();
      const { journal } = stores;
      expect(await journal.deadLettered('run_d', 2, 'tool')).toBe(false);
      await journal.markDeadLettered('run_d', 2, 'tool', '2026-01-01T00:00:00.000Z');
      await journal.markDeadLettered('run_d', 2, 'tool', '2026-01-02T00:00:00.000Z');
      expect(await journal.deadLettered('run_d', 2, 'tool')).toBe(true);
      expect(await stores.ledger.get('run_d:dead-lettered:2')).toBe('2026-01-01T00:00:00.000Z');
      expect(await journal.deadLettered('run_d', 2, 'model')).toBe(false);
      expect(await journal.deadLettered('run_d', 1, 'tool')).toBe(false);
      await journal.markDeadLettered('run_d', 2, 'run', '2026-01-03T00:00:00.000Z');
      expect(await journal.deadLettered('run_d', 2, 'run')).toBe(true);
      expect(await stores.ledger.get('run_d:dead-lettered:run:2')).toBe('2026-01-03T00:00:00.000Z');
      // a mark the ledger already holds (a database written before the journal had the method) reads as one
      await stores.ledger.putIfAbsent('run_e:dead-lettered:model:0', '2026-01-01T00:00:00.000Z');
      expect(await journal.deadLettered('run_e', 0, 'model')).toBe(true);
    });

    it('putConversation, conversation: a conversation without a checkpoint, kept as the conversation store holds it', async () => {
      const { stores } = harness();
      const { journal } = stores;
      expect(await journal.conversation('conv_host')).toBeUndefined();
      await journal.putConversation('conv_host', sample());
      expect(await journal.conversation('conv_host')).toEqual(sample());
      expect(await stores.conversations.get('conv_host')).toEqual(sample());
      expect(await stores.runs.get('run_host')).toBeUndefined();
      await journal.putConversation('conv_host', [{ n: 1 }]);
      expect(await journal.conversation('conv_host')).toEqual([{ n: 1 }]);
      await stores.conversations.put('conv_other', [{ n: 2 }]);
      expect(await journal.conversation('conv_other')).toEqual([{ n: 2 }]);
    });

    it("record, recorded by a host's tool-call id, and markCompleted, completion: ledger rows under <host>:<runId>, the first stays", async () => {
      const { stores } = harness();
      const { journal } = stores;
      const hostRun = 'ai-sdk:run_h';
      expect(await journal.recorded(hostRun, 2, 'call_9')).toBeUndefined();
      await journal.record(hostRun, { stepIndex: 2, callIndex: 'call_9', outcome: { status: 'success', data: 1 } });
      await journal.record(hostRun, { stepIndex: 2, callIndex: 'call_9', outcome: { status: 'success', data: 2 } });
      expect(await journal.recorded(hostRun, 2, 'call_9')).toEqual({ status: 'success', data: 1 });
      expect(await stores.ledger.get('ai-sdk:run_h:2:call_9')).toEqual({ status: 'success', data: 1 });
      expect(await journal.completion(hostRun)).toBeUndefined();
      await journal.markCompleted(hostRun, 'done 東京');
      await journal.markCompleted(hostRun, 'again');
      expect(await journal.completion(hostRun)).toEqual({ text: 'done 東京' });
      expect(await stores.ledger.get('ai-sdk:run_h:completed')).toEqual({ text: 'done 東京' });
      await journal.markCompleted('anthropic:run_n', null);
      expect(await journal.completion('anthropic:run_n')).toEqual({ text: null });
      // a mark the ledger already holds (written before the journal had the method) reads as one
      await stores.ledger.putIfAbsent('ai-sdk:run_old:completed', { text: 'old' });
      expect(await journal.completion('ai-sdk:run_old')).toEqual({ text: 'old' });
      await stores.ledger.putIfAbsent('ai-sdk:run_old:0:call_1', { status: 'success' });
      expect(await journal.recorded('ai-sdk:run_old', 0, 'call_1')).toEqual({ status: 'success' });
    });

    it("finish: commits the last step and ends its holder's claim, never another holder's", async () => {
      const { stores } = harness();
      const { journal } = stores;
      const last = { ...stepCheckpoint(0), status: 'completed' as const };
      expect((await journal.open('run_a', { holder: 'worker-1', leaseMs: LEASE_MS })).claimed).toBe(true);
      await journal.finish(step([{ n: 1 }], 0, last, [{ stepIndex: 0, callIndex: 0, outcome: 1 }]), 'worker-1');
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 1 }]);
      expect((await stores.runs.get('run_a'))?.status).toBe('completed');
      expect(await journal.recorded('run_a', 0, 0)).toBe(1);
      expect(await stores.claims.get('run:run_a')).toBeUndefined();
      // another holder's claim is left as it is
      expect(await stores.claims.acquire('run:run_b', 'drain-a', 60_000)).toBe(true);
      await journal.finish(step([{ n: 1 }], 0, { ...last, runId: 'run_b', conversationRef: 'conv_b' }), 'worker-1');
      expect((await stores.claims.get('run:run_b'))?.holder).toBe('drain-a');
      expect((await stores.runs.get('run_b'))?.status).toBe('completed');
    });

    it('open: takes a free claim with the checkpoint and conversation as committed, nothing for a run never committed', async () => {
      const { stores } = harness();
      const { journal } = stores;
      await journal.commit(step([{ n: 1 }], 0, stepCheckpoint(2)));
      await journal.commit(step([{ n: 1 }, { n: 2 }], 1, stepCheckpoint(3)));
      expect(await journal.open('run_a', { holder: 'worker-1', leaseMs: LEASE_MS })).toEqual({
        claimed: true,
        checkpoint: stepCheckpoint(3),
        messages: [{ n: 1 }, { n: 2 }],
      });
      expect((await stores.claims.get('run:run_a'))?.holder).toBe('worker-1');
      expect(await stores.claims.acquire('run:run_a', 'worker-2', LEASE_MS)).toBe(false);
      expect(await journal.open('run_none', { holder: 'worker-1', leaseMs: LEASE_MS })).toEqual({ claimed: true, checkpoint: undefined, messages: undefined });
      // without a claim: a read only
      expect(await journal.open('run_a')).toEqual({ claimed: true, checkpoint: stepCheckpoint(3), messages: [{ n: 1 }, { n: 2 }] });
    });

    it('open: refused while another holder has the claim (who holds it is said); its own holder takes it again; an ended one is free', async () => {
      const { stores, clock } = harness();
      const { journal } = stores;
      await journal.commit(step([{ n: 1 }], 0, stepCheckpoint(1)));
      expect(await stores.claims.acquire('run:run_a', 'drain-a', LEASE_MS)).toBe(true);
      expect(await journal.open('run_a', { holder: 'worker-1', leaseMs: LEASE_MS })).toEqual({ claimed: false, holder: 'drain-a' });
      expect(await journal.open('run_a', { holder: 'drain-a', leaseMs: LEASE_MS })).toMatchObject({ claimed: true, checkpoint: stepCheckpoint(1) });
      expect(await journal.release('run_a', 'drain-a')).toBe(true);
      expect(await journal.release('run_a', 'drain-a')).toBe(false);
      // a lease that ends: on the injected clock, or (server) in real time
      const endingLeaseMs = serverClock ? SHORT_LEASE_MS : LEASE_MS;
      expect(await stores.claims.acquire('run:run_a', 'drain-b', endingLeaseMs)).toBe(true);
      if (serverClock) await new Promise((resolve) => setTimeout(resolve, endingLeaseMs + 100));
      else await clock.advance(endingLeaseMs);
      expect(await journal.open('run_a', { holder: 'worker-1', leaseMs: LEASE_MS })).toMatchObject({ claimed: true, checkpoint: stepCheckpoint(1) });
      expect(await journal.renew('run_a', 'worker-1', LEASE_MS)).toBe(true);
      expect(await journal.renew('run_a', 'drain-b', LEASE_MS)).toBe(false);
    });

    it('open with a start step: committed with the claim only for a run with nothing committed (started), else not written', async () => {
      const { stores } = harness();
      const { journal } = stores;
      const first = step(sample().slice(0, 2), 0, stepCheckpoint(0));
      const opened = await journal.open('run_a', { holder: 'worker-1', leaseMs: LEASE_MS }, first);
      expect(opened).toMatchObject({ claimed: true, checkpoint: undefined, messages: undefined });
      expect((await stores.claims.get('run:run_a'))?.holder).toBe('worker-1');
      if (opened.claimed && opened.started === true) {
        expect(await stores.runs.get('run_a')).toEqual(stepCheckpoint(0));
        expect(await stores.conversations.get('conv_a')).toEqual(sample().slice(0, 2));
      } else {
        // a journal that does not commit it: nothing of it is written, the caller commits it
        expect(opened).not.toHaveProperty('started', true);
        expect(await stores.runs.get('run_a')).toBeUndefined();
        expect(await stores.conversations.get('conv_a')).toBeUndefined();
        await journal.commit(first);
      }
      // a run with a checkpoint: the start step is not written, the committed run is answered
      const again = await journal.open('run_a', { holder: 'worker-1', leaseMs: LEASE_MS }, step([{ n: 9 }], 0, stepCheckpoint(5, 'conv_other')));
      expect(again).toEqual({ claimed: true, checkpoint: stepCheckpoint(0), messages: sample().slice(0, 2) });
      expect(await stores.runs.get('run_a')).toEqual(stepCheckpoint(0));
      expect(await stores.conversations.get('conv_other')).toBeUndefined();
      // a refused claim writes nothing
      const other = step([{ n: 1 }], 0, stepCheckpoint(0, 'conv_b', 'run_b'));
      expect(await stores.claims.acquire('run:run_b', 'drain-a', LEASE_MS)).toBe(true);
      expect(await journal.open('run_b', { holder: 'worker-1', leaseMs: LEASE_MS }, other)).toEqual({ claimed: false, holder: 'drain-a' });
      expect(await stores.runs.get('run_b')).toBeUndefined();
      expect(await stores.conversations.get('conv_b')).toBeUndefined();
    });

    it('open and renew: a lease that is not a positive, finite number of ms up to 2^31 − 1 is INVALID_OPTIONS, and takes nothing', async () => {
      const { stores } = harness();
      for (const leaseMs of [0, Number.NaN, 2 ** 31]) {
        const opened = await stores.journal.open('run_c', { holder: 'worker-1', leaseMs }).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect((opened as { code?: string } | undefined)?.code).toBe('INVALID_OPTIONS');
        const renewed = await stores.journal.renew('run_c', 'worker-1', leaseMs).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect((renewed as { code?: string } | undefined)?.code).toBe('INVALID_OPTIONS');
      }
      expect(await stores.claims.get('run:run_c')).toBeUndefined();
    });
  });
}
