import { describe } from 'vitest';
import { describeBreakerStateStoreContract } from './breaker-state-store-contract.ts';
import { describeClaimStoreContract } from './claim-store-contract.ts';
import { describeConversationStoreContract } from './conversation-store-contract.ts';
import { describeDeadLetterQueuesContract } from './dead-letter-queue-contract.ts';
import { describeExactValuesContract } from './exact-values-contract.ts';
import { describeIdempotencyLedgerContract } from './idempotency-ledger-contract.ts';
import { describeRunQueueContract } from './run-queue-contract.ts';
import { describeRunJournalContract } from './run-journal-contract.ts';
import { describeRunStoreContract } from './run-store-contract.ts';
import type { MakeStores } from './stores-contract-harness.ts';

/**
 * Registers the whole contract of the `Stores` ports (conversations, runs, idempotency ledger,
 * breaker state, both dead-letter queues, run queue, claims, the run journal, and exact values: `\u0000`, lone
 * surrogates and deep values through every store) as vitest suites under `Stores contract: <name>`.
 * Every backend runs it; a new backend is done when it passes.
 *
 * `makeStores` is called before every test and must return fresh, empty stores built with the
 * returned fake clock (and, when not 7 days, say which `conversationTtlMs`); `cleanup` runs after
 * the test. A bundle whose claims run on a clock of their own (Redis's) registers its parts
 * separately, giving `describeClaimStoreContract` and `describeRunJournalContract` `{ clock: 'server' }`. Call it at the top level of a `*.test.ts` file (it uses `describe`/`it` from vitest,
 * a dev dependency of anyone running it).
 *
 * @example
 * ```ts
 * describeStoresContract('memory', async () => {
 *   const clock = createFakeClock();
 *   const stores = createMemoryStores({ clock });
 *   return { stores, clock, cleanup: () => stores.close() };
 * });
 * ```
 */
export function describeStoresContract(name: string, makeStores: MakeStores): void {
  describe(`Stores contract: ${name}`, () => {
    describeConversationStoreContract(makeStores);
    describeRunStoreContract(makeStores);
    describeIdempotencyLedgerContract(makeStores);
    describeBreakerStateStoreContract(makeStores);
    describeDeadLetterQueuesContract(makeStores);
    describeRunQueueContract(makeStores);
    describeClaimStoreContract(makeStores);
    describeRunJournalContract(makeStores);
    describeExactValuesContract(makeStores);
  });
}
