import {
  completionKey,
  deadLetterMarkKey,
  deliveryErrorKey,
  ledgerKey,
  runClaimKey,
  type JsonValue,
  type OpenedRun,
  type RunJournal,
  type RunStep,
} from '../ground/ports/run-journal.ts';
import type { Stores } from '../ground/ports/stores.ts';

/** The stores a {@link createStoreJournal} journal is made of. */
export type JournalStores = Pick<Stores, 'conversations' | 'runs' | 'ledger'> & { claims?: Stores['claims'] | undefined };

/**
 * A {@link RunJournal} composed from the store ports, for any bundle (the memory and Redis
 * backends, a custom or wrapped one). Each call goes to the stores' methods as they are at the time
 * of the call, so a wrapper put on a store sees every write.
 *
 * - `open` is `claims.acquire`, then `runs.get` and `conversations.get` (a claim store is optional:
 *   without one every open is claimed and holds nothing).
 * - `commit` records the step's outcomes (`ledger.putIfAbsent`), then writes the whole conversation
 *   (`conversations.put`) and last the checkpoint (`runs.put`): a crash between them leaves
 *   outcomes recorded and the previous checkpoint, from which a resumed run reads the outcomes
 *   rather than calling again. `finish` releases the claim after the commit.
 * - `recordDeliveryError` is `ledger.putIfAbsent`; another text than the stored one replaces it by
 *   `ledger.delete` and `putIfAbsent` (a crash between the two loses the record: the entry then says
 *   the cause is unknown). `markDeadLettered` and `markCompleted` are `ledger.putIfAbsent`,
 *   `deadLettered` and `completion` a `ledger.get`; `conversation` and `putConversation` are the
 *   conversation store's `get` and `put`.
 */
export function createStoreJournal(stores: JournalStores): RunJournal {
  const journal: RunJournal = {
    async open(runId, claim): Promise<OpenedRun> {
      const claims = stores.claims;
      if (claim !== undefined && claims !== undefined && !(await claims.acquire(runClaimKey(runId), claim.holder, claim.leaseMs))) {
        const current = await claims.get(runClaimKey(runId)).catch(() => undefined);
        return { claimed: false, holder: current?.holder };
      }
      try {
        const checkpoint = await stores.runs.get(runId);
        const messages = checkpoint === undefined ? undefined : await stores.conversations.get(checkpoint.conversationRef);
        return { claimed: true, checkpoint, messages };
      } catch (error) {
        if (claim !== undefined) await claims?.release(runClaimKey(runId), claim.holder).catch(() => undefined);
        throw error;
      }
    },
    recorded: (runId, stepIndex, callIndex) => stores.ledger.get(ledgerKey(runId, stepIndex, callIndex)),
    async record(runId, call) {
      return (await stores.ledger.putIfAbsent(ledgerKey(runId, call.stepIndex, call.callIndex), call.outcome)).value;
    },
    forget: (runId, stepIndex, callIndex) => stores.ledger.delete(ledgerKey(runId, stepIndex, callIndex)),
    async commit(step: RunStep) {
      const runId = step.checkpoint.runId;
      for (const call of step.calls) await journal.record(runId, call);
      await stores.conversations.put(step.conversationRef, step.messages);
      await stores.runs.put(step.checkpoint);
    },
    async finish(step, holder) {
      await journal.commit(step);
      if (holder !== undefined) await stores.claims?.release(runClaimKey(step.checkpoint.runId), holder);
    },
    renew: async (runId, holder, leaseMs) => (stores.claims === undefined ? true : stores.claims.renew(runClaimKey(runId), holder, leaseMs)),
    release: async (runId, holder) => (stores.claims === undefined ? false : stores.claims.release(runClaimKey(runId), holder)),
    async recordDeliveryError(messageId, error) {
      const key = deliveryErrorKey(messageId);
      // the same failure again (a poison message fails alike at every delivery) leaves the record as
      // it is: replacing it is a delete and a put, and a crash between the two would lose it
      const first = await stores.ledger.putIfAbsent(key, error);
      if (first.stored || first.value === error) return;
      await stores.ledger.delete(key);
      await stores.ledger.putIfAbsent(key, error);
    },
    async lastDeliveryError(messageId) {
      const value = await stores.ledger.get(deliveryErrorKey(messageId));
      return typeof value === 'string' ? value : undefined;
    },
    async markDeadLettered(runId, stepIndex, kind, at) {
      await stores.ledger.putIfAbsent(deadLetterMarkKey(runId, stepIndex, kind), at);
    },
    deadLettered: async (runId, stepIndex, kind) => (await stores.ledger.get(deadLetterMarkKey(runId, stepIndex, kind))) !== undefined,
    conversation: (conversationRef) => stores.conversations.get(conversationRef),
    putConversation: (conversationRef, messages) => stores.conversations.put(conversationRef, messages),
    async markCompleted(runId, text) {
      await stores.ledger.putIfAbsent(completionKey(runId), { text });
    },
    completion: async (runId) => completionOf(await stores.ledger.get(completionKey(runId))),
  };
  return journal;
}

/** A completion mark as the ledger holds it (`{ text }`), read as {@link RunJournal.completion} answers it. */
export function completionOf(value: JsonValue | undefined): { text: string | null } | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'object' && value !== null && !Array.isArray(value) ? value.text : undefined;
  return { text: typeof text === 'string' ? text : null };
}
