/**
 * `toolrun/testing/contract`: the contract suites every `Stores` backend passes, one per port and
 * one for the whole bundle. They register vitest suites (`describe`/`it`), so import this entry
 * only from `*.test.ts` files run by vitest (an optional peer dependency).
 *
 * @packageDocumentation
 */
export { describeStoresContract } from './describe-stores-contract.ts';
export { describeConversationStoreContract } from './conversation-store-contract.ts';
export { describeRunStoreContract } from './run-store-contract.ts';
export { describeIdempotencyLedgerContract } from './idempotency-ledger-contract.ts';
export { describeBreakerStateStoreContract } from './breaker-state-store-contract.ts';
export { describeDeadLetterQueueContract, describeDeadLetterQueuesContract } from './dead-letter-queue-contract.ts';
export { describeRunQueueContract } from './run-queue-contract.ts';
export { describeClaimStoreContract, type ClaimStoreContractOptions } from './claim-store-contract.ts';
export { describeRunJournalContract } from './run-journal-contract.ts';
export { describeExactValuesContract } from './exact-values-contract.ts';
export { describeFailureLogContract, type FailureLogContractHarness, type MakeFailureLog } from './failure-log-contract.ts';
export type { FakeClockLike, MakeStores, StoresContractHarness } from './stores-contract-harness.ts';
