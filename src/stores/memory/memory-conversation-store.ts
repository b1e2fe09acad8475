import type { Clock } from '../../ground/ports/clock.ts';
import type { ConversationStore, IdempotencyLedger, RunStore, StepCommit, StepCommitStores } from '../../ground/ports/stores.ts';
import { copyStoredItems, copyStoredValue } from './copy-stored-value.ts';
import { memoryLedgerWriter } from './memory-idempotency-ledger.ts';
import { memoryCheckpointWriter } from './memory-run-store.ts';

interface StoredConversation {
  messages: unknown[];
  expiresAtMs: number;
}

/**
 * An in-memory {@link ConversationStore} with a time to live measured on the injected clock.
 *
 * A conversation expires `ttlMs` after its last write (at exactly that instant it is gone). Expired
 * conversations are dropped when read and swept on every write (the map is kept in last-write
 * order, so the sweep only touches expired entries). Messages are deep-copied on the way in and
 * out (`structuredClone`'s copy, made by a walk for plain data, see {@link copyStoredValue}), so
 * callers cannot change stored state; a value `structuredClone` rejects is rejected with its
 * `DataCloneError`, storing nothing. Safe to call concurrently.
 *
 * With `steps` (the run store and ledger of the same bundle) it has `commitStep`: the step's new
 * messages, its checkpoint and its ledger rows are copied first (only the new messages, so a step's
 * cost does not grow with the conversation; a value that cannot be copied writes nothing), then
 * the messages are appended and the ledger rows and the checkpoint written, all before any other
 * caller runs (nothing in between yields). A memory run store and ledger take those copies as they
 * are; any other `steps` are written through their `putIfAbsent` and `put`.
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
  /** Makes `conversation` the one stored under the ref, last in write order, expiring `ttlMs` from now. */
  const replace = (conversationRef: string, conversation: StoredConversation, nowMs: number) => {
    conversation.expiresAtMs = nowMs + ttlMs;
    conversations.delete(conversationRef);
    conversations.set(conversationRef, conversation);
    sweepExpired(nowMs);
  };

  const store: ConversationStore = {
    async put(conversationRef, messages) {
      replace(conversationRef, { messages: copyStoredItems(messages), expiresAtMs: 0 }, clock.now());
    },
    async get(conversationRef) {
      const conversation = conversations.get(conversationRef);
      if (conversation === undefined) return undefined;
      if (conversation.expiresAtMs <= clock.now()) {
        conversations.delete(conversationRef);
        return undefined;
      }
      return copyStoredItems(conversation.messages);
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
    // the memory run store and ledger take the values copied here as they are (no second copy)
    const writeCheckpoint = memoryCheckpointWriter(runs);
    const writeOutcome = memoryLedgerWriter(ledger);
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
      const added = copyStoredItems(step.messages, appendable ? storedCount : 0);
      const checkpoint = copyStoredValue(step.checkpoint);
      const rows = step.ledger.map((row) => ({ key: row.key, value: copyStoredValue(row.value) }));
      if (appendable) {
        for (const message of added) stored.messages.push(message);
        replace(step.conversationRef, stored, nowMs);
      } else {
        replace(step.conversationRef, { messages: added, expiresAtMs: 0 }, nowMs);
      }
      if (writeCheckpoint !== undefined && writeOutcome !== undefined) {
        for (const row of rows) writeOutcome(row.key, row.value);
        writeCheckpoint(checkpoint);
        return true;
      }
      // another bundle's run store or ledger acting before their promise returns: nothing interleaves
      const writes: Promise<unknown>[] = rows.map((row) => ledger.putIfAbsent(row.key, row.value));
      writes.push(runs.put(checkpoint));
      await Promise.all(writes);
      return true;
    };
  }
  return store;
}
