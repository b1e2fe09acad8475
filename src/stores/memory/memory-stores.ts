import type { MessageFailureEntry, ResumableEntry } from '../../ground/dead-letter-entries.ts';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import { DEFAULT_CONVERSATION_TTL_MS } from '../default-conversation-ttl.ts';
import { createStoreJournal } from '../store-journal.ts';
import { createMemoryBreakerStateStore } from './memory-breaker-state-store.ts';
import { createMemoryClaimStore } from './memory-claim-store.ts';
import { createMemoryConversationStore } from './memory-conversation-store.ts';
import { createMemoryDeadLetterQueue } from './memory-dead-letter-queue.ts';
import { createMemoryIdempotencyLedger } from './memory-idempotency-ledger.ts';
import { createMemoryRunQueue } from './memory-run-queue.ts';
import { createMemoryRunStore } from './memory-run-store.ts';

/** Options of {@link createMemoryStores}. */
export interface MemoryStoresOptions {
  /** Source of time for TTLs, leases, claims and timestamps. @defaultValue `systemClock` */
  clock?: Clock;
  /** Time to live of a conversation after its last `put`, in ms. @defaultValue 7 days */
  conversationTtlMs?: number;
}

/**
 * Creates the whole {@link Stores} bundle in memory: for tests, for users' tests
 * (`toolrun/testing`) and for the process-wide default. Nothing survives the process.
 *
 * Every value is deep-copied on the way in and out (the copy `structuredClone` makes, by a walk for
 * plain data), so a caller cannot change stored state by mutating what it passed or received, nor
 * the stores a caller's values; values must therefore be structured-cloneable (JSON values always
 * are): one that is not (a function, a symbol…) is rejected with `structuredClone`'s
 * `DataCloneError`, storing nothing. Every operation is atomic within the process.
 * The run queue lives here too (not under `src/queues/`) because the `Stores` port bundles it.
 * Its `journal` is {@link createStoreJournal}'s, over these stores (a step is written store by
 * store: nothing survives a crash anyway). `close()` is a no-op kept for symmetry with durable backends.
 */
export function createMemoryStores(options: MemoryStoresOptions = {}): Stores {
  const clock = options.clock ?? systemClock;
  const ttlMs = options.conversationTtlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const stores: Omit<Stores, 'journal'> = {
    conversations: createMemoryConversationStore({ clock, ttlMs }),
    runs: createMemoryRunStore(),
    ledger: createMemoryIdempotencyLedger(),
    breakers: createMemoryBreakerStateStore(),
    messageDlq: createMemoryDeadLetterQueue<MessageFailureEntry>({ clock }),
    toolDlq: createMemoryDeadLetterQueue<ResumableEntry>({ clock }),
    queue: createMemoryRunQueue({ clock }),
    claims: createMemoryClaimStore({ clock }),
    close: async () => {},
  };
  return Object.assign(stores, { journal: createStoreJournal(stores) });
}
