/**
 * The in-memory backend: every port of `core/ports/stores.ts`, for tests and the process-wide
 * default. Exported from the root entry and from `toolrun/testing`.
 */
export { createMemoryStores, type MemoryStoresOptions } from './memory-stores.ts';
export { DEFAULT_CONVERSATION_TTL_MS } from '../default-conversation-ttl.ts';
export { createMemoryConversationStore } from './memory-conversation-store.ts';
export { createMemoryRunStore } from './memory-run-store.ts';
export { createMemoryIdempotencyLedger } from './memory-idempotency-ledger.ts';
export { createMemoryBreakerStateStore } from './memory-breaker-state-store.ts';
export { createMemoryDeadLetterQueue } from './memory-dead-letter-queue.ts';
export { createMemoryRunQueue, type MemoryRunQueueOptions } from './memory-run-queue.ts';
export { createMemoryClaimStore } from './memory-claim-store.ts';
export { createMemoryFailureLog, type MemoryFailureLog, type MemoryFailureLogOptions } from './memory-failure-log.ts';
