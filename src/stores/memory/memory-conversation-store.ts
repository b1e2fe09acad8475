import type { Clock } from '../../ground/ports/clock.ts';
import type { ConversationStore, IdempotencyLedger, RunStore, StepCommit, StepCommitStores } from '../../ground/ports/stores.ts';

interface StoredConversation {
  messages: unknown[];
  expiresAtMs: number;
}

/**
 * An in-memory {@link ConversationStore} with a time to live measured on the injected clock.
 *
 * A conversation expires `ttlMs` after its last write (at exactly that instant it is gone). Expired
 * conversations are dropped when read and swept on every write (the map is kept in last-write
 * order, so the sweep only touches expired entries). Messages are deep-copied (`structuredClone`)
 * on the way in and out, so callers cannot change stored state. Safe to call concurrently.
 *
 * With `steps` (the run store and ledger of the same bundle) it has `commitStep`: the step's new
 * messages are appended (only they are copied, so a step's cost does not grow with the
 * conversation), then the ledger rows and the checkpoint are written through `steps`, all before
 * any other caller runs (nothing in between yields).
 */
export function createMemoryConversationStore(options: {
  clock: Clock;
  ttlMs: number;
  steps?: { runs: RunStore; ledger: IdempotencyLedger };
}): ConversationStore {
  const { clock, ttlMs } = options;
  const conversations = new Map<string, StoredConversation>();

  const sweepExpired = (nowMs: number) => {
    for (const [ref, conversation] of conversations) {
      if (conversation.expiresAtMs > nowMs) break;
      conversations.delete(ref);
    }
  };
  const replace = (conversationRef: string, messages: unknown[], nowMs: number) => {
    conversations.delete(conversationRef);
    conversations.set(conversationRef, { messages, expiresAtMs: nowMs + ttlMs });
    sweepExpired(nowMs);
  };

  const store: ConversationStore = {
    async put(conversationRef, messages) {
      replace(conversationRef, structuredClone([...messages]), clock.now());
    },
    async get(conversationRef) {
      const conversation = conversations.get(conversationRef);
      if (conversation === undefined) return undefined;
      if (conversation.expiresAtMs <= clock.now()) {
        conversations.delete(conversationRef);
        return undefined;
      }
      return structuredClone(conversation.messages);
    },
    async delete(conversationRef) {
      conversations.delete(conversationRef);
    },
  };

  if (options.steps !== undefined) {
    const { runs, ledger } = options.steps;
    const ownPut = store.put;
    const ownRunsPut = runs.put;
    const ownLedgerPut = ledger.putIfAbsent;
    store.commitStep = async (step: StepCommit, stores: StepCommitStores) => {
      const own =
        stores.conversations === store &&
        store.put === ownPut &&
        stores.runs === runs &&
        runs.put === ownRunsPut &&
        stores.ledger === ledger &&
        ledger.putIfAbsent === ownLedgerPut;
      if (!own) return false;
      // copied (and so checked) before anything changes: a value structuredClone rejects writes nothing
      const { storedCount } = step;
      const nowMs = clock.now();
      const stored = conversations.get(step.conversationRef);
      const appendable =
        stored !== undefined &&
        stored.expiresAtMs > nowMs &&
        Number.isInteger(storedCount) &&
        storedCount <= step.messages.length &&
        stored.messages.length === storedCount;
      const added = structuredClone(appendable ? step.messages.slice(storedCount) : [...step.messages]);
      const checkpoint = structuredClone(step.checkpoint);
      const rows = structuredClone(step.ledger.map((row) => ({ ...row })));
      if (appendable) {
        for (const message of added) stored.messages.push(message);
        replace(step.conversationRef, stored.messages, nowMs);
      } else {
        replace(step.conversationRef, added, nowMs);
      }
      // the memory ledger and run store act before their promise returns: nothing interleaves
      const writes: Promise<unknown>[] = rows.map((row) => ledger.putIfAbsent(row.key, row.value));
      writes.push(runs.put(checkpoint));
      await Promise.all(writes);
      return true;
    };
  }
  return store;
}
